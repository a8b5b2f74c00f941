"""``/ai history`` and ``/mineclaw history`` (the application in process, the provider real
HTTP over loopback, the archive real SQLite): a player gets their own private conversation, an
operator the public session, as a book through ``output.book`` when the plugin opens books; the
console (or a plugin without books) gets plain lines; the node is the bridge's to check."""

from __future__ import annotations

from bridge.app.commands.history import HISTORY_NODE
from bridge.link.messages import OutputBook, OutputBookResult, WireModel

from .conftest import ALEX, EVERY_NODE, STEVE, App, hello, rendered

OPERATOR = [*EVERY_NODE, HISTORY_NODE]


def with_books(app: App) -> list[OutputBook]:
    opened: list[OutputBook] = []

    def answer(data: WireModel) -> WireModel:
        assert isinstance(data, OutputBook)
        opened.append(data)
        return OutputBookResult(shown=True)

    app.link.responders["output.book"] = answer
    plugin = app.runtime.plugin
    assert plugin is not None
    plugin.connected(app.link, hello(features=("books",)))
    return opened


def page_text(book: OutputBook) -> str:
    return "\n".join(rendered(page) for page in book.pages)


async def answered(app: App, text: str) -> None:
    await app.link.wait_for(
        lambda name, data: name == "output.chat" and text in rendered(data.text)
    )


async def test_history_books_show_each_conversation_to_whom_it_belongs(app: App) -> None:
    opened = with_books(app)
    assert await app.command("history", granted=OPERATOR) == ["<gray>Nothing to show yet."]
    app.provider.answer("<green>Sweet berries</green>, matey.")
    assert (await app.chat("@ai how do I tame a fox?", player=STEVE)).decision == "accept"
    await app.turn_done()
    app.provider.answer("Behind the hill.")
    await app.command("ai", "where is my house?", player=ALEX)
    await answered(app, "Behind the hill.")

    # An operator opens the public session; it holds nothing of Alex's private conversation.
    lines = await app.command("history", player=STEVE, granted=OPERATOR)
    assert lines == ["<gray>Opened the conversation as a book (2 entries)."]
    (public,) = opened
    assert public.player == STEVE.uuid and public.title == "Mineclaw: history"
    text = page_text(public)
    assert "Steve</dark_aqua>: how do I tame a fox?" in text
    # The answer's tags are escaped: shown as written, never a colour or a speaker.
    assert "Mineclaw</dark_purple>: \\<green>Sweet berries\\</green>, matey." in text
    assert "house" not in text
    # The answer is model text (restricted MiniMessage), the question a plain value.
    assert any("Sweet berries" in (page.model or {}).get("m1", "") for page in public.pages)

    # Alex opens their own private conversation; a player without the node cannot see the
    # public one.
    assert await app.command("ai", "history", player=ALEX) == [
        "<gray>Opened the conversation as a book (2 entries)."
    ]
    private = opened[-1]
    assert private.player == ALEX.uuid and "where is my house?" in page_text(private)
    assert "fox" not in page_text(private)
    refused = await app.command("history", player=ALEX, granted=EVERY_NODE)
    assert refused == ["<red>You may not use /mineclaw history."]

    # The console gets plain lines, tags removed.
    console = await app.command("history", player=None, granted=OPERATOR)
    assert console == [
        "<gray>Steve: how do I tame a fox?",
        "<gray>Mineclaw: Sweet berries, matey.",
    ]
    app.runtime.audit.flush()
    shown = app.runtime.audit.events("history.shown")
    assert [(e.fields["player"], e.fields["book"]) for e in shown] == [
        ("Steve", True),
        ("Alex", True),
        ("console", False),
    ]


async def test_without_books_a_player_gets_the_lines(app: App) -> None:
    app.provider.answer("Hi.")
    assert (await app.chat("@ai hello", player=STEVE)).decision == "accept"
    await app.turn_done()
    lines = await app.command("history", player=STEVE, granted=OPERATOR)
    assert lines == ["<gray>Steve: hello", "<gray>Mineclaw: Hi."]
    assert app.link.of("output.book") == []
