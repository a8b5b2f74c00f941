"""The playground's folder handling: the key check, the copy, the scripted providers file."""

from __future__ import annotations

import io
from pathlib import Path

from bridge.control import init_config_dir, load_control_plane
from bridge.playground.console import Conversation, Screen
from bridge.playground.scripted_model import MODEL_NAME
from bridge.playground.session import (
    Playground,
    copy_folder,
    local_storage,
    missing_key,
    scripted_providers_yml,
)
from bridge.playground.simulated_server import Player


def test_a_fresh_folder_misses_the_default_key_until_it_is_set(tmp_path: Path) -> None:
    init_config_dir(tmp_path / "c")
    assert missing_key(tmp_path / "c", environ={}) == "OPENAI_API_KEY"
    assert missing_key(tmp_path / "c", environ={"OPENAI_API_KEY": "sk-x"}) is None
    (tmp_path / "c" / ".env").write_text("OPENAI_API_KEY=sk-from-dotenv\n")
    assert missing_key(tmp_path / "c", environ={}) is None


def test_the_copy_leaves_the_data_and_the_link_token_behind(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    init_config_dir(folder)
    (folder / "data").mkdir()
    (folder / "data" / "archive.sqlite3").write_text("x")
    (folder / "link.token").write_text("t" * 43 + "\n")
    (folder / "skills" / "data").mkdir(parents=True, exist_ok=True)  # only the top is skipped
    copy = copy_folder(folder, tmp_path / "scratch")
    assert not (copy / "data").exists() and not (copy / "link.token").exists()
    assert (copy / "skills" / "data").is_dir()
    assert (copy / "providers.yml").read_text() == (folder / "providers.yml").read_text()


def test_the_scripted_providers_file_is_valid_and_needs_no_key(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    init_config_dir(folder)
    (folder / "providers.yml").write_text(scripted_providers_yml("http://127.0.0.1:9/v1"))
    plane = load_control_plane(folder, environ={})
    assert plane.providers.default == MODEL_NAME
    assert missing_key(folder, environ={}) is None


def test_the_copy_rehearses_on_sqlite_whatever_database_the_owner_uses(tmp_path: Path) -> None:
    """A rehearsal on the owner's PostgreSQL would write its turns into the real archive and
    contend for the live server's lease; the copy keeps everything in its own folder."""
    folder = tmp_path / "c"
    init_config_dir(folder)
    owners = (
        "schema: 1\r\n"
        "storage:\r\n"
        "  backend: postgresql\r\n"
        "  dsn: postgresql://mineclaw@127.0.0.1:1/mineclaw\r\n"
        "  start_wait_s: 0\r\n"
        "rate_limits: {player_cooldown_ms: 1234}\r\n"
    )
    (folder / "config.yml").write_text(owners, newline="")
    copy = copy_folder(folder, tmp_path / "scratch")
    plane = load_control_plane(copy, environ={})
    assert plane.config.storage.backend == "sqlite" and plane.config.storage.dsn is None
    assert plane.config.rate_limits.player_cooldown_ms == 1234  # the rest is the owner's
    assert (folder / "config.yml").read_bytes() == owners.encode()  # the original untouched
    assert local_storage(copy) is False  # on SQLite already: nothing to change


def test_a_symlinked_config_is_replaced_in_the_copy_not_written_through(tmp_path: Path) -> None:
    folder, elsewhere = tmp_path / "c", tmp_path / "shared-config.yml"
    init_config_dir(folder)
    owners = "schema: 1\nstorage: {backend: postgresql, dsn: 'postgresql://m@127.0.0.1:1/m'}\n"
    elsewhere.write_text(owners)
    (folder / "config.yml").unlink()
    (folder / "config.yml").symlink_to(elsewhere)
    copy = copy_folder(folder, tmp_path / "scratch")
    assert load_control_plane(copy, environ={}).config.storage.backend == "sqlite"
    assert elsewhere.read_text() == owners


async def test_an_operator_holds_every_node_the_bridge_reports(tmp_path: Path) -> None:
    # The simulated server did not report mineclaw.persona or mineclaw.history, so an operator
    # was refused the /ai persona and /mineclaw history that /mineclaw help listed.
    playground = await Playground.open(
        tmp_path / "config", scripted=True, show=lambda *_: None, said=lambda *_: None
    )
    try:
        op = Player("Steve", op=True)
        await playground.server.join(op)
        assert "mineclaw.persona" in playground.server.granted(op)
        assert "mineclaw.command.history" in playground.server.granted(op)
        lines = await playground.server.command(op, ["ai", "persona"])
        assert lines and not any("may not" in line for line in lines), lines
        player = Player("Alex")
        await playground.server.join(player)
        assert "mineclaw.persona" not in playground.server.granted(player)
    finally:
        await playground.close()


async def test_a_relink_keeps_listen_mode_on(tmp_path: Path) -> None:
    # Each connect said it was a new server (a new instance id), so /disconnect then /connect
    # turned listen mode off as a restart would.
    playground = await Playground.open(
        tmp_path / "config", scripted=True, show=lambda *_: None, said=lambda *_: None
    )
    try:
        op = Player("Steve", op=True)
        await playground.server.join(op)
        await playground.server.command(op, ["listen", "on"])
        runtime = playground.network.default.runtime
        assert runtime.listen.on
        await playground.server.close()
        await playground.server.connect()
        await playground.server.join(op)
        status = await playground.server.command(op, ["listen"])
        assert runtime.listen.on, status
    finally:
        await playground.close()


async def test_reload_in_the_playground_reads_the_owners_folder_again(tmp_path: Path) -> None:
    # /mineclaw reload said "reloaded" but reloaded the playground's old copy: the owner's
    # edit was silently not there.
    out = io.StringIO()
    screen = Screen(out)
    owner = tmp_path / "config"
    playground = await Playground.open(owner, scripted=True, show=screen.show, said=screen.show)
    try:
        conversation = Conversation(
            playground.server,
            screen,
            lambda _prompt: "",
            player=Player("Steve", op=True),
            copy_again=playground.copy_again,
        )
        await playground.server.join(conversation.player)
        config = owner / "config.yml"
        config.write_text(
            config.read_text().replace('public_prefix: "@ai"', 'public_prefix: "@bot"')
        )
        await conversation.handle("/mineclaw reload")
        assert playground.network.default.runtime.plane.config.chat.public_prefix == "@bot"
        assert f"copied {owner} again" in out.getvalue()
        # the scripted model is still the one answering
        assert "scripted" in (playground.folder / "providers.yml").read_text()
    finally:
        await playground.close()


async def test_another_player_is_online_from_the_start(tmp_path: Path) -> None:
    # The README's "@ai make Alex wave" answered target_offline: Alex had not joined.
    out = io.StringIO()
    screen = Screen(out)
    playground = await Playground.open(
        tmp_path / "config", scripted=True, show=screen.show, said=screen.show
    )

    def end(_prompt: str) -> str:
        raise EOFError

    try:
        await Conversation(playground.server, screen, end).run()
        names = {player.name for player in playground.server.players.values()}
        assert names == {"Steve", "Alex"}
        assert "Alex is online too" in out.getvalue()
    finally:
        await playground.close()


async def test_a_reload_of_a_broken_folder_names_the_owners_line_and_copies_nothing(
    tmp_path: Path,
) -> None:
    # The copy's config.yml is rewritten for the demos (no comments), so the bridge's reload
    # of the copy named config.yml:12 for a mistake on line 22 of the owner's file.
    out = io.StringIO()
    screen = Screen(out)
    owner = tmp_path / "config"
    playground = await Playground.open(owner, scripted=True, show=screen.show, said=screen.show)
    try:
        steve = Player("Steve")
        conversation = Conversation(
            playground.server,
            screen,
            lambda _prompt: "",
            player=steve,
            copy_again=playground.copy_again,
        )
        await playground.server.join(steve)
        config = owner / "config.yml"
        lines = config.read_text().splitlines()
        wrong = next(i for i, line in enumerate(lines) if "global_cooldown_ms" in line)
        lines[wrong] = "  global_cooldown_ms: -7"
        config.write_text("\n".join(lines) + "\n")
        copied = (playground.folder / "config.yml").read_text()

        # A player who may not reload is refused by the bridge; nothing is copied or said.
        await conversation.handle("/mineclaw reload")
        assert "copied" not in out.getvalue() and "not reloaded" not in out.getvalue()
        assert "may not use /mineclaw reload" in out.getvalue()

        conversation.player = Player("Steve", op=True)
        await playground.server.join(conversation.player)
        await conversation.handle("/mineclaw reload")
        said = out.getvalue()
        assert f"config.yml:{wrong + 1}:3: rate_limits.global_cooldown_ms" in said, said
        assert "not reloaded, the bridge goes on as it was" in said
        assert (playground.folder / "config.yml").read_text() == copied  # nothing copied
        assert playground.network.default.runtime.plane.version == 1
    finally:
        await playground.close()


async def test_every_toggle_an_operator_or_player_set_stays_through_a_relink(
    tmp_path: Path,
) -> None:
    """Issue 49, part 6: what the commands set (listen mode, a player's opt-out, the model
    switch, a persona, the active conversation, a cleared session, the configuration's
    version) is as it was when the same server links again; only a command or a reload
    changes it."""
    playground = await Playground.open(
        tmp_path / "config", scripted=True, show=lambda *_: None, said=lambda *_: None
    )
    server = playground.server
    runtime = playground.network.default.runtime
    try:
        op, alex = Player("Steve", op=True), Player("Alex")
        for player in (op, alex):
            await server.join(player)
        assert "Listen mode is on." in await server.command(op, ["listen", "on"])
        await server.command(alex, ["listen", "ignore-me"])
        await server.command(op, ["model", MODEL_NAME])
        await server.command(op, ["ai", "persona", "playground-pirate"])
        await server.command(op, ["ai", "new", '"plans"'])
        await server.command(op, ["clear"])
        await server.command(op, ["reload"])
        before = (
            runtime.session.state.session_id,
            runtime.model_override,
            runtime.plane.version,
            await server.command(op, ["ai", "persona"]),
            await server.command(op, ["ai", "list"]),
            await server.command(alex, ["listen", "status"]),
        )
        assert before[1] == MODEL_NAME and before[2] == 2

        for _ in range(2):  # a blip, and another one
            await server.close()
            await server.connect()
            for player in (op, alex):
                await server.join(player)
            await playground.network.default.app.players_read()  # the store read again
            after = (
                runtime.session.state.session_id,
                runtime.model_override,
                runtime.plane.version,
                await server.command(op, ["ai", "persona"]),
                await server.command(op, ["ai", "list"]),
                await server.command(alex, ["listen", "status"]),
            )
            assert after == before
            assert runtime.listen.on
            assert "listen: on" in await server.command(op, ["status"])
    finally:
        await playground.close()
