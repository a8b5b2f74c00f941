"""The playground's parts, started together in one process and closed together.

A copy of the owner's configuration folder (its archive and link token left behind, and its
storage on SQLite in the copy, so a rehearsal never writes to the owner's data), the real
bridge application serving it on a loopback link, the simulated server linked to it, and,
when asked for, the scripted offline model with the copy's ``providers.yml`` pointed at it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from bridge.app.network.network import Network
from bridge.control import init_config_dir, load_control_plane
from bridge.control.layout import CONFIG_FILE, PROVIDERS_FILE
from bridge.control.plane import RELOAD_SETTLE_S
from bridge.link.auth import ensure_token_file, read_token
from bridge.link.server import LinkServer, LinkSettings
from bridge.playground.audit_tail import follow
from bridge.playground.demos import add_demos
from bridge.playground.scripted_model import MODEL_NAME, ScriptedModelServer
from bridge.playground.simulated_server import Show, SimulatedServer
from bridge.store.archive import DATA_DIR_NAME
from bridge.store.audit import AUDIT_JSONL_FILE_NAME
from bridge.unicode_text import plain_lines

LOG_FILE = "playground.log"
_LEFT_BEHIND = (DATA_DIR_NAME, "link.token")


def missing_key(config_dir: Path, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable the default model's key refers to when it is unset (None: a key is there,
    or the provider needs none). ``environ`` stands in for the process environment."""
    plane = load_control_plane(config_dir, environ=environ)
    providers = plane.providers
    for provider_id in sorted(providers.providers_in_use()):
        provider = providers.providers.get(provider_id)
        if provider is not None and provider.api_key_missing:
            return provider.api_key_env
    return None


def scripted_providers_yml(base_url: str) -> str:
    """A ``providers.yml`` whose only model is the scripted one at ``base_url``."""
    return (
        "schema: 1\n"
        f"default: {MODEL_NAME}\n"
        "providers:\n"
        "  playground:\n"
        "    api:\n"
        "      type: openai_chat_completions\n"
        f"      base_url: {base_url}\n"
        "    api_key: sk-playground-scripted-no-key-needed\n"
        "    retry: {max_attempts: 1, initial_backoff_ms: 0, max_backoff_ms: 0}\n"
        "models:\n"
        f"  {MODEL_NAME}:\n"
        "    limits: {context_window: 100000, max_output_tokens: 1000}\n"
    )


def copy_folder(config_dir: Path, into: Path) -> Path:
    """``config_dir`` copied to ``into/config`` without its data and link token, and with its
    storage on SQLite in the copy (see `local_storage`). Called again, it replaces what was
    copied before (the copy's data and token stay)."""
    copy = into / "config"
    if copy.exists():
        for entry in copy.iterdir():
            if entry.name in _LEFT_BEHIND:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    shutil.copytree(
        config_dir,
        copy,
        dirs_exist_ok=True,
        ignore=lambda _dir, names: [
            name for name in names if _dir == str(config_dir) and name in _LEFT_BEHIND
        ],
        symlinks=True,
    )
    local_storage(copy)
    return copy


def local_storage(copy: Path) -> bool:
    """Point the copy's storage at SQLite in its own folder; True when it named another backend.

    A rehearsal on the owner's PostgreSQL would write its turns into the real archive and audit
    log, and take (or wait for) the lease of a live server of the same id. A ``config.yml`` the
    copy cannot read is left as it is: the bridge then names its problem as ``serve`` would."""
    path = copy / CONFIG_FILE
    if not path.is_file():
        return False
    try:
        document = yaml.safe_load(plain_lines(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    if not isinstance(document, dict) or not isinstance(document.get("storage"), dict):
        return False
    storage = document["storage"]
    if storage.get("backend", "sqlite") == "sqlite":
        return False
    document["storage"] = {}
    path.unlink()  # a symlink to the owner's file is replaced, never written through
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), "utf-8")
    return True


@dataclass
class Playground:
    """Everything that runs; ``close`` stops it in the reverse order."""

    folder: Path
    """The copy the bridge serves (in a temporary directory, removed by ``close``)."""
    network: Network
    link: LinkServer
    server: SimulatedServer
    model: ScriptedModelServer | None
    audit: asyncio.Task[None]
    scratch: Path
    source: Path | None = None
    """The owner's folder the copy was made from: ``/mineclaw reload`` copies it again."""
    demos: tuple[str, ...] = ()
    """What the scripted model's demos added to the copy (`bridge.playground.demos`)."""

    def copy_again(self) -> Path:
        """The owner's folder copied over the copy again (its data and token stay), as at
        start, so the reload that follows reads what the owner edited; ``OSError`` when it
        cannot be read. Returns the owner's folder.

        The owner's files are judged first, where they are: ``ConfigError`` names their
        problems by the owner's lines, and nothing is copied (the bridge goes on with what it
        has). The copy's ``config.yml`` is rewritten for the demos, so a reload of a broken copy
        named lines the owner's file does not have."""
        assert self.source is not None
        load_control_plane(self.source, settle_s=RELOAD_SETTLE_S)
        copy_folder(self.source, self.scratch)
        if self.model is not None:
            _for_the_scripted_model(self.folder, self.model)
        return self.source

    @classmethod
    async def open(cls, config_dir: Path, *, scripted: bool, show: Show, said: Show) -> Playground:
        """``show`` gets what players see; ``said`` gets what the bridge did (kind "server")."""
        init_config_dir(config_dir)  # as `serve --init` does
        scratch = Path(tempfile.mkdtemp(prefix="mineclaw-try-"))
        model: ScriptedModelServer | None = None
        demos: tuple[str, ...] = ()
        try:
            folder = copy_folder(config_dir, scratch)
            _log_to(scratch / LOG_FILE)
            if scripted:
                model = ScriptedModelServer(lambda note: said("server", "", note))
                await model.start()
                demos = _for_the_scripted_model(folder, model)
            token = read_token(ensure_token_file(folder))
            network = await asyncio.to_thread(Network.open, folder, default_token=token)
        except BaseException:
            if model is not None:
                await model.close()
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        link = LinkServer(servers=network, settings=LinkSettings(host="127.0.0.1", port=0))
        audit_path = folder / DATA_DIR_NAME / AUDIT_JSONL_FILE_NAME
        audit = asyncio.create_task(follow(audit_path, lambda text: said("server", "", text)))
        mcp = network.default.runtime.mcp
        offered: list[tuple[str, ...]] = [()]

        def tools_changed() -> None:  # says when the MCP tools offered change (a server ready)
            names = tuple(tool.name for tool in mcp.tools())
            if names != offered[0]:
                offered[0] = names
                said("server", "", "MCP tools offered: " + (", ".join(names) or "none"))

        mcp.add_listener(tools_changed)
        try:
            await link.start()
            await mcp.start()  # the copy's MCP servers, on this loop, as `serve` starts them
        except BaseException:
            audit.cancel()
            await network.aclose()
            if model is not None:
                await model.close()
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        server = SimulatedServer(link.url, token, show)
        playground = cls(folder, network, link, server, model, audit, scratch, config_dir, demos)
        try:
            await server.connect()
        except BaseException:
            await playground.close()
            raise
        return playground

    async def close(self) -> None:
        self.audit.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.audit
        await self.server.close()
        await self.link.close()
        await self.network.aclose()
        if self.model is not None:
            await self.model.close()
        root = logging.getLogger()
        for handler in root.handlers:
            handler.close()  # the log file is in the scratch folder removed next
        root.handlers.clear()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _for_the_scripted_model(folder: Path, model: ScriptedModelServer) -> tuple[str, ...]:
    """The copy answered by ``model``, with its demos added; what was added."""
    (folder / PROVIDERS_FILE).write_text(scripted_providers_yml(model.base_url))
    return tuple(add_demos(folder, model.port))


def _log_to(path: Path) -> None:
    """The bridge's log lines go to a file, so they do not break into the conversation."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
