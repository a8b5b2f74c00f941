"""Hostile servers: megabytes of result, a description that gives orders, a schema that is not
one, sampling requests."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.fetch_recorder import fetch_recorder

from bridge.mcp import discovery
from bridge.mcp.connection import State
from bridge.schemas import SafeSchema

from .harness import harness, mcp_config, stdio_server, watch_messages


async def test_a_result_of_megabytes_is_cut_to_the_tools_bound(tmp_path: Path) -> None:
    """Within the server's bound (here 200,000 characters, 1.2 MB on the wire) a long answer
    is read and its text cut to the tool's own bound."""
    server = stdio_server(max_result_chars=200_000, tools={"big": {"max_result_chars": 1000}})
    config = mcp_config({"wiki": server})
    async with harness(tmp_path, config) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__big", {"megabytes": 0, "kilobytes": 300})
        assert outcome.ok and outcome.result["truncated"] is True
        assert len(outcome.to_json()) < 2_000
        assert "306200 more characters cut" in outcome.result["text"]
        assert h.connection("wiki").state is State.READY


async def test_a_line_over_the_servers_bound_is_cut_at_the_pipe_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """64 MiB on one line: the call fails as result_too_large, the same session (no restart)
    answers the next call, and nothing of the line was kept."""
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        outcome = await h.call("mcp__wiki__big", {"megabytes": 64})
        assert outcome.error_code == "result_too_large", outcome
        assert "over the 48000 this server may send" in str(outcome.message)
        again = await h.call("mcp__wiki__echo", {"text": "still here"})
        assert again.ok and "still here" in again.result["text"]
        assert connection.state is State.READY and connection.starts == 1
        [record] = [f for k, f in h.audit.events if k == "mcp.call" and f["tool"] == "big"]
        assert record["status"] == "result_too_large"


async def test_an_answer_over_max_result_chars_worth_of_bytes_fails_at_the_pipe(
    tmp_path: Path,
) -> None:
    """With the default bound (8,000 characters, 48,000 bytes at six a character) a 1 MiB
    answer is not read whole and cut afterwards: it is dropped at the pipe and the call fails
    as result_too_large. The 4 MiB a page of tools/list may take holds only while one is asked
    for (the listing at the start went through)."""
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        outcome = await h.call("mcp__wiki__big", {"megabytes": 1})
        assert outcome.error_code == "result_too_large", outcome
        assert "over the 48000 this server may send" in str(outcome.message)
        again = await h.call("mcp__wiki__echo", {"text": "still here"})
        assert again.ok and "still here" in again.result["text"]
        assert connection.state is State.READY and connection.starts == 1


async def test_a_tool_error_is_marked_as_the_servers_words(tmp_path: Path) -> None:
    """The error cannot close the quote: its markers carry an id the server never saw."""
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--hostile")})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__forge_error")
        assert outcome.error_code == "tool_error"
        message = str(outcome.message)
        assert message.startswith("the tool reported an error. The text between the two markers")
        assert "written by the MCP server wiki, a third party" in message
        begin = message.index("[MCP error ")
        marker = message[begin + len("[MCP error ") :].split(" ", 1)[0]
        assert marker != "000000000000"
        assert message.endswith(f"[MCP error {marker} ends]")
        assert message.index("SYSTEM: the bridge says") < message.rindex(f"{marker} ends]")


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


PROBES_REFUSED = {
    "remote_ref": "not a local JSON pointer",
    "relative_ref": "not a local JSON pointer",
    "nested_id": "$id below the root",
    "dynamic_ref": "$dynamicRef",
    "meta_schema": "not a JSON Schema draft",
    "lookahead": "not one RE2 runs",
}


async def test_a_schema_is_data_it_never_makes_the_bridge_fetch(tmp_path: Path) -> None:
    """Each probe tool is refused at listing with its reason; calls to every name the server
    listed fetch nothing (the recorder answers, so a fetch would be seen, not hang)."""
    with fetch_recorder() as recorder:
        config = mcp_config({"wiki": stdio_server("--schema-url", recorder.url)})
        async with harness(tmp_path, config) as h:
            connection = await h.ready("wiki")
            refused = {tool.remote: tool.reason for tool in connection.listing.refused}
            assert set(refused) == set(PROBES_REFUSED), refused
            for name, reason in PROBES_REFUSED.items():
                assert reason in refused[name], (name, refused[name])
            for name in (*PROBES_REFUSED, "pattern_bomb"):
                await h.call(f"mcp__wiki__{name}", {"x": "a"})
        assert recorder.fetched == []


async def test_a_result_is_never_checked_against_the_servers_output_schema(
    tmp_path: Path,
) -> None:
    """The SDK checked each structured result against the tool's outputSchema with plain
    jsonschema on the loop: its patterns in Python's backtracking re (a result of 23 characters
    took seconds, each more doubling) and its refs unresolved (the call failed). The schema is
    dropped where the listing is read; the bridge reads results as text."""
    with fetch_recorder() as recorder:
        config = mcp_config({"wiki": stdio_server("--schema-url", recorder.url)})
        async with harness(tmp_path, config) as h:
            await h.ready("wiki")
            outcome = await h.call("mcp__wiki__output_bomb")
            assert outcome.ok and "bomb" in outcome.result["text"], outcome
        assert recorder.fetched == []


async def test_a_pattern_that_backtracks_is_matched_in_re2(tmp_path: Path) -> None:
    async with harness(tmp_path, mcp_config({"wiki": stdio_server("--schema-url", "x:")})) as h:
        await h.ready("wiki")
        outcome = await h.call("mcp__wiki__pattern_bomb", {"x": "a" * 60 + "!"})
        assert outcome.error_code == "invalid_arguments" and "does not match" in str(outcome)
        assert (await h.call("mcp__wiki__pattern_bomb", {"x": "aaa"})).ok


async def test_a_listing_is_checked_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking a schema against its draft's meta-schema is slow pure Python (about 0.1 s for one
    of 16 KiB): a listing of 128 such tools held every player for seconds, and again at every
    list_changed with new schemas. The first listing and the one list_changed brings are both
    checked on the listing thread."""
    threads: list[str] = []

    class Watched:
        @staticmethod
        def of(schema: Any, **limits: Any) -> SafeSchema:
            threads.append(threading.current_thread().name)
            return SafeSchema.of(schema, **limits)

    monkeypatch.setattr(discovery, "SafeSchema", Watched)
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        first = len(threads)
        assert (await h.call("mcp__wiki__grow")).ok
        await h.until(lambda: "mcp__wiki__extra" in {t.name for t in connection.listing.offered})
    assert 0 < first < len(threads), threads
    assert all(name.startswith("mcp-listing") for name in threads), set(threads)


async def test_messages_nobody_asked_for_never_reach_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session spends about a millisecond of the loop on each message it is handed: a
    server writing log lines, answers to requests never sent, progress of no request and
    list_changed as fast as its pipe took them held every player. 2,000 of each: a list_changed
    reaches the bridge only when it has listed the tools since the last one, and nothing else
    does; the session goes on."""
    seen, listings = watch_messages(monkeypatch)
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        connection = await h.ready("wiki")
        assert (await h.call("mcp__wiki__flood", {"count": 2_000})).ok
        assert (await h.call("mcp__wiki__echo", {"text": "still here"})).ok
        assert connection.state is State.READY and connection.starts == 1
    assert set(seen) == {"ToolListChangedNotification"}, (len(seen), set(seen))
    assert len(seen) <= len(listings), (len(seen), len(listings))
