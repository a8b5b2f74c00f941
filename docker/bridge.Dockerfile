# syntax=docker/dockerfile:1
# The Mineclaw bridge. Built from the repository root:
#   docker build -f docker/bridge.Dockerfile -t mineclaw-bridge .
# It runs `mineclaw-bridge serve --init --config /config` (--init: the first start writes the
# default files into the folder the plugin made); /config is the Minecraft server's
# plugins/Mineclaw folder, shared with the plugin (see compose.yaml).

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bridge ./bridge
# Wheels for the bridge and its dependencies, so the runtime stage needs no compiler or cache.
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# The same numeric user as itzg/minecraft-server's default (UID and GID 1000): both containers
# read and write the shared folder, and the bridge's link.token and .env are private to it.
RUN groupadd --gid 1000 mineclaw \
    && useradd --uid 1000 --gid 1000 --no-create-home --shell /usr/sbin/nologin mineclaw
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels mineclaw-bridge \
    && rm -rf /wheels
USER 1000:1000
WORKDIR /config
ENV PYTHONUNBUFFERED=1
# The link binds link.host from config.yml, 127.0.0.1 by default; compose shares the Minecraft
# container's network namespace, so nothing else can reach it and no port is published.
ENTRYPOINT ["mineclaw-bridge"]
CMD ["serve", "--init", "--config", "/config"]
