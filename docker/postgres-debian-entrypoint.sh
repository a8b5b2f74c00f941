#!/bin/sh
# postgres-debian.Dockerfile's entry point: what the official postgres image does with its
# variables, for Debian's packages. The first start (an empty PGDATA) makes the cluster with
# POSTGRES_USER as its superuser and POSTGRES_PASSWORD (scram-sha-256 over the network) and
# creates POSTGRES_DB; every start then execs the server, listening on every address of the
# container (the compose network; nothing is published).
set -eu
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
bin=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
sockets=/tmp
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    "$bin/initdb" --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        "$bin/pg_ctl" --pgdata="$PGDATA" --wait --silent \
            -o "-c listen_addresses='' -c unix_socket_directories=$sockets" start
        "$bin/psql" -h "$sockets" -U "$user" -d postgres -v ON_ERROR_STOP=1 -q \
            -c "CREATE DATABASE \"$db\""
        "$bin/pg_ctl" --pgdata="$PGDATA" --wait --silent stop
    fi
    echo "postgres-entrypoint: made the cluster, superuser $user, database $db"
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories="$sockets"
