# PostgreSQL from Debian's packages, standing in for compose.yaml's `postgres:17` where no image
# registry can be reached (docker/podman_e2e.py). It takes the same variables as the official
# image (POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD; data in /var/lib/postgresql/data):
# postgres-debian-entrypoint.sh makes the cluster on the first start. Built from docker/:
#   podman build -f postgres-debian.Dockerfile -t localhost/mineclaw-postgres:debian .
# BASE: a Debian root file system with the postgresql package (mmdebstrap, then podman import;
# docker/README.md, "Without a registry").
ARG BASE=localhost/mineclaw-debian-postgresql:bookworm
FROM ${BASE}
COPY postgres-debian-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
# A new named volume takes this folder's owner and mode from the image.
RUN mkdir -p /var/lib/postgresql/data \
    && chown postgres:postgres /var/lib/postgresql/data \
    && chmod 700 /var/lib/postgresql/data
ENV PGDATA=/var/lib/postgresql/data
USER postgres
STOPSIGNAL SIGINT
ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint.sh"]
