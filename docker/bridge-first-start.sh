#!/bin/sh
# The bridge container's entry point in compose.yaml. On the first start (no config.yml in the
# shared folder yet) it writes the bridge's default files and points their storage at the
# compose file's PostgreSQL; then it runs `mineclaw-bridge` with the container's command (exec:
# the bridge gets the stop signal). A config.yml that exists is never touched: to move an
# existing SQLite set-up, add the same storage section by hand (docs/operations.md).
set -eu
config=/config
if [ ! -e "$config/config.yml" ]; then
    mineclaw-bridge init "$config"
    cat >> "$config/config.yml" <<'YAML'

# Written by docker/bridge-first-start.sh on the first start: the compose file's PostgreSQL.
storage:
  backend: postgresql
  dsn: postgresql://mineclaw@postgres:5432/mineclaw
  password: ${MINECLAW_DB_PASSWORD}
YAML
fi
exec mineclaw-bridge "$@"
