"""The owner's per-tool settings cannot be dodged by a name: a setting matches whatever the
case, ``-``/``_``/``.`` and look-alike letters; a tool the owner did not name gets what
``unlisted`` says (review by default once any tool is named); a tool that appears later gets
no more than the server's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bridge.mcp.connection import State

from .harness import harness, mcp_config, stdio_server

CHAT = "mineclaw.command.chat"
WIKI = "mineclaw.tool.wiki"


def offered_to(h: object, granted: frozenset[str] = frozenset()) -> set[str]:
    return {spec.name for spec in h.invoker(granted).tools.specs}  # type: ignore[attr-defined]


@pytest.mark.parametrize("renamed", ["delete-page", "Delete_page", "DELETE-PAGE", "de1ete_page"])
async def test_a_renamed_tool_gets_the_owners_settings_of_the_name_it_looks_like(
    tmp_path: Path, renamed: str
) -> None:
    for settings, held in (({"enabled": False}, frozenset({WIKI})), ({"permission": WIKI}, None)):
        server = stdio_server("--tool-names", renamed, tools={"delete_page": settings})
        async with harness(tmp_path, mcp_config({"wiki": server})) as h:
            await h.ready("wiki")
            name = f"mcp__wiki__{renamed}"
            assert name in {t.name for t in h.connection("wiki").listing.offered}
            assert name not in offered_to(h)  # off, or gated by a node a plain player lacks
            outcome = await h.call(name)
            assert outcome.error_code == "unknown_tool"
            if held is None:
                assert name in offered_to(h, frozenset({WIKI}))


async def test_an_unlisted_tool_waits_for_a_review_once_the_owner_names_any(
    tmp_path: Path,
) -> None:
    names = "--tool-names", "delete_page,delete_page_v2"
    configs = {
        None: ({"mcp__wiki__echo"}, "({n} awaiting review)"),
        "review": ({"mcp__wiki__echo"}, "({n} awaiting review)"),
        "refuse": ({"mcp__wiki__echo"}, "({n} unlisted, not offered)"),
        "offer": ({"mcp__wiki__delete_page_v2", "mcp__wiki__echo"}, None),
    }
    for unlisted, (expected, said) in configs.items():
        fields = {"tools": {"delete_page": {"enabled": False}, "echo": {}}}
        if unlisted is not None:
            fields["unlisted"] = unlisted  # type: ignore[assignment]
        async with harness(tmp_path, mcp_config({"wiki": stdio_server(*names, **fields)})) as h:
            await h.ready("wiki")
            served = {n for n in offered_to(h, frozenset({WIKI})) if "page" in n or "echo" in n}
            assert served == expected, unlisted
            if said is not None:  # every tool but delete_page and echo is unlisted
                said = said.format(n=len(h.connection("wiki").listing.offered) - 2)
                assert said in h.clients.status()[0], (unlisted, h.clients.status())
            v2 = await h.call("mcp__wiki__delete_page_v2")
            assert v2.ok is (unlisted == "offer")


async def test_two_tools_whose_names_look_alike_are_not_both_offered(tmp_path: Path) -> None:
    server = stdio_server("--tool-names", "delete_page,Delete-Page,de1ete_page")
    async with harness(tmp_path, mcp_config({"wiki": server})) as h:
        connection = await h.ready("wiki")
        refused = {t.remote: t.reason for t in connection.listing.refused}
        assert set(refused) == {"Delete-Page", "de1ete_page"}
        assert all("looks like the name of 'delete_page'" in r for r in refused.values())


async def test_a_tool_that_appears_later_gets_no_more_than_the_servers_defaults(
    tmp_path: Path,
) -> None:
    """The owner's setting for ``extra`` opens it to every player who may chat, and is free;
    the server's defaults gate its tools and mark them paid. ``extra`` appears only on
    ``list_changed``: it keeps the server's gate and cost."""
    server = stdio_server(
        permission=WIKI,
        cost="paid",
        unlisted="offer",
        tools={"extra": {"permission": CHAT, "cost": "free", "max_result_chars": 100_000}},
    )
    async with harness(tmp_path, mcp_config({"wiki": server})) as h:
        connection = await h.ready("wiki")
        assert (await h.call("mcp__wiki__grow", granted=frozenset({WIKI}))).ok
        await h.until(lambda: "mcp__wiki__extra" in {t.name for t in connection.listing.offered})
        assert "mcp__wiki__extra" not in offered_to(h, frozenset({CHAT}))
        [extra] = [t for t in h.clients.tools() if t.name == "mcp__wiki__extra"]
        assert extra.entry.permission == WIKI and extra.entry.cost == "paid"
        assert connection.state is State.READY


def test_two_settings_naming_the_same_tool_are_refused() -> None:
    with pytest.raises(ValidationError, match="'delete_page' and 'Delete-Page' name the same tool"):
        mcp_config(
            {"wiki": stdio_server(tools={"delete_page": {}, "Delete-Page": {"enabled": False}})}
        )
