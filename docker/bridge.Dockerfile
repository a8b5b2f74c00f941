# syntax=docker/dockerfile:1
# The Mineclaw bridge. Built from the repository root:
#   docker build -f docker/bridge.Dockerfile -t mineclaw-bridge .
# It runs `mineclaw-bridge serve --init --config /config` (--init: the first start writes the
# default files into the folder the plugin made); /config is the Minecraft server's
# plugins/Mineclaw folder, shared with the plugin (see compose.yaml).
#
# PYTHON_IMAGE: any image with Python 3.11+ as `python3` (and its venv module). Where no
# registry can be reached, one built from Debian's packages does (docker/README.md, "Without a
# registry": mmdebstrap, then podman import).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
# Only where the build's traffic passes a proxy with its own certificate authority: the path of
# that bundle, mounted into the build (docker/podman_e2e.py does so). Unset, pip's own is used.
ARG PIP_CERT
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bridge ./bridge
# Wheels for the bridge and its dependencies, so the runtime stage needs no compiler or cache.
# A virtual environment of its own: a distribution's Python refuses pip on its system site.
RUN python3 -m venv /build \
    && /build/bin/pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
# The same numeric user as itzg/minecraft-server's default (UID and GID 1000): both containers
# read and write the shared folder, and the bridge's link.token and .env are private to it.
RUN groupadd --gid 1000 mineclaw \
    && useradd --uid 1000 --gid 1000 --no-create-home --shell /usr/sbin/nologin mineclaw
COPY --from=build /wheels /wheels
RUN python3 -m venv /opt/mineclaw \
    && /opt/mineclaw/bin/pip install --no-cache-dir --no-index --find-links=/wheels mineclaw-bridge \
    && rm -rf /wheels
ENV PATH=/opt/mineclaw/bin:$PATH
USER 1000:1000
WORKDIR /config
ENV PYTHONUNBUFFERED=1
# The link binds link.host from config.yml, 127.0.0.1 by default; compose shares the Minecraft
# container's network namespace, so nothing else can reach it and no port is published.
ENTRYPOINT ["mineclaw-bridge"]
CMD ["serve", "--init", "--config", "/config"]
