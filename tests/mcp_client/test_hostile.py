"""Hostile servers: megabytes of result, a description that gives orders, a schema that is not
one, sampling requests."""

from __future__ import annotations

from pathlib import Path

from bridge.mcp.connection import State

from .harness import harness, mcp_config, stdio_server


async def test_a_result_of_megabytes_is_cut_to_the_tools_bound(tmp_path: Path) -> None:
    config = mcp_config({"wiki": stdio_server(tools={"big": {"max_result_chars": 1000}})})
    async with harness(tmp_path, config) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__big", {"megabytes": 8})
        assert outcome.ok and outcome.result["truncated"] is True
        assert len(outcome.to_json()) < 2_000
        assert "8387608 more characters cut" in outcome.result["text"]
        assert h.connection("wiki").state is State.READY


async def test_a_description_giving_orders_is_third_party_text_on_one_line(
    tmp_path: Path,
) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--hostile")})) as h:
        await h.ready("wiki")
        [spec] = [s for s in h.invoker().tools.specs if s.name == "mcp__wiki__search"]
        assert spec.description.startswith(
            "[MCP server wiki; the server's own description, third-party text] Search the wiki."
        )
        assert "\x1b" not in spec.description and "\n" not in spec.description


async def test_a_tool_with_an_invalid_schema_is_not_offered_and_says_why(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--hostile")})) as h:
        connection = await h.ready("wiki")
        [refused] = connection.listing.refused
        assert refused.remote == "broken"
        assert "not a valid JSON Schema at properties/x/type" in refused.reason
        assert "mcp__wiki__broken" not in {s.name for s in h.invoker().tools.specs}
        assert "(1 refused)" in h.clients.status()[0]


async def test_a_sampling_request_is_refused_and_the_server_stays_up(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--hostile")})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__ask_model")
        assert outcome.ok, outcome
        assert "sampling refused" in outcome.result["text"]
        assert (await h.call("mcp__wiki__echo", {"text": "still here"})).ok


async def test_elicitation_and_roots_are_refused(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--hostile")})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__ask_player")
        assert outcome.ok, outcome
        text = outcome.result["text"]
        assert "elicitation refused" in text and "roots refused" in text, text
