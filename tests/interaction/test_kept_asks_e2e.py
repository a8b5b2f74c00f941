"""A question in flight when its bridge dies or hangs is answered by the next bridge, once
(issue 50, part 2), end to end: two ``python -m bridge serve`` processes on one PostgreSQL
database, a testkit server (the real plugin core) listing both, and the holder killed or
paused while it streams an answer.

Before: the wake had its verdict from the holder, so the plugin forgot it; the holder's turn
died with it (or, paused, lost its lease), and the player was never answered nor told. Now the
plugin keeps each question until the bridge ends it and sends it again, once, with its id, to
the bridge it links to next; a paused holder that resumes cannot answer it a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from app.scripted_provider import HeldReply, ScriptedProvider

from bench.link_proxy import LinkProxy
from tests.postgres_server import PostgresServer

from .test_hung_holder_e2e import WAIT, holder_and_standby
from .test_network_e2e import Server
from .test_takeover_e2e import _archived
from .test_turns_e2e import OP

NOT_DELIVERED = "was not delivered"


def _lines(lobby: Server, since: int, contains: str) -> list[dict[str, Any]]:
    return [
        e
        for e in lobby.testkit.events[since:]
        if e.get("event") == "message" and contains in e.get("text", "")
    ]


async def _ask_then_signal_the_holder(
    holder: Server,
    lobby: Server,
    provider: ScriptedProvider,
    question: str,
    held_words: tuple[str, str],
    sig: signal.Signals,
) -> tuple[int, HeldReply]:
    """Steve asks in public; while the holder streams its (held) answer it gets ``sig``. The
    standby's answer is scripted next. Returns the mark before the question and the held reply."""
    await lobby.add("Steve", OP)
    since = lobby.mark()
    held = provider.held(*held_words)
    provider.answer("Answered by the standby.")
    assert (await lobby.chat("Steve", f"@ai {question}"))["outcome"] == "public"
    await held.streaming.wait()
    holder.process.send_signal(sig)
    return since, held


async def test_a_question_in_flight_when_its_bridge_is_killed_is_answered_by_the_next_once(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    async with holder_and_standby(tmp_path, postgres_server) as (
        first,
        second,
        lobby,
        provider,
        db,
    ):
        since, _ = await _ask_then_signal_the_holder(
            first, lobby, provider, "lobby kept", ("Never ", "seen."), signal.SIGKILL
        )

        await lobby.message("*", "Answered by the standby.", since)
        await second.stderr.wait_for(r"server lobby: lease taken", timeout=WAIT)
        # The standby ended the question: a later relink sends nothing again.
        await _next_question_answered(lobby, provider)
        assert len(_lines(lobby, since, "Answered by the standby.")) == 1
        assert _lines(lobby, since, NOT_DELIVERED) == []
        assert _lines(lobby, since, "seen.") == []
        asked = [text for _, texts in _archived(postgres_server, db) for text in texts]
        assert sum("lobby kept" in t for t in asked) == 1, asked


async def test_a_question_in_flight_when_its_bridge_hangs_is_answered_once_though_it_resumes(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    async with holder_and_standby(tmp_path, postgres_server) as (
        first,
        second,
        lobby,
        provider,
        db,
    ):
        since, held = await _ask_then_signal_the_holder(
            first, lobby, provider, "lobby paused", ("Late ", "answer."), signal.SIGSTOP
        )

        # The plugin gives the silent holder up, links to the standby once the lease expired,
        # and sends the question again: the standby answers it.
        await lobby.message("*", "Answered by the standby.", since)
        await second.stderr.wait_for(r"server lobby: lease taken \(epoch 2\)", timeout=WAIT)

        # The holder resumes and finishes its turn: nobody sees it, nothing archives it.
        held.release.set()
        first.process.send_signal(signal.SIGCONT)
        await first.stderr.wait_for(r"server lobby: context retired", timeout=WAIT)
        provider.answer("After the resume.")
        mark = lobby.mark()
        assert (await lobby.chat("Steve", "@ai lobby after"))["outcome"] == "public"
        await lobby.message("*", "After the resume.", mark)
        assert len(_lines(lobby, since, "Answered by the standby.")) == 1
        assert _lines(lobby, since, "Late answer.") == []
        assert _lines(lobby, since, NOT_DELIVERED) == []
        asked = [text for _, texts in _archived(postgres_server, db) for text in texts]
        assert sum("lobby paused" in t for t in asked) == 1, asked


async def _next_question_answered(lobby: Server, provider: ScriptedProvider) -> None:
    """Steve asks again and the bridge serving the lobby now answers."""
    provider.answer("A second question.")
    mark = lobby.mark()
    assert (await lobby.chat("Steve", "@ai lobby next"))["outcome"] == "public"
    await lobby.message("*", "A second question.", mark)


@contextlib.contextmanager
def _commits(postgres_server: PostgresServer, db: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection told of every turn the archive commits (a trigger's NOTIFY, delivered at
    the commit itself): the holder's commit is an event to wait for, not a table to poll."""
    dsn = postgres_server.dsn(db)
    with psycopg.connect(dsn, password=postgres_server.password, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION notify_turn() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN PERFORM pg_notify('turn_archived', NEW.turn_id); RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER turn_archived AFTER INSERT ON turns"
            " FOR EACH ROW EXECUTE FUNCTION notify_turn()"
        )
        conn.execute("LISTEN turn_archived")
        yield conn


async def _archived_with(
    postgres_server: PostgresServer, db: str, commits: psycopg.Connection[Any], question: str
) -> int:
    """How many archived turns asked ``question``, once the first turn was committed."""
    told = await asyncio.to_thread(next, commits.notifies(timeout=WAIT, stop_after=1), None)
    assert told is not None, f"no turn asking {question!r} was archived"
    return sum(question in t for _, texts in _archived(postgres_server, db) for t in texts)


async def test_a_question_committed_before_its_answer_reached_the_plugin_is_not_run_again(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    # The holder commits the turn (archive row and all), but its answer never reaches the
    # plugin: the link drops with the holder's death. The plugin sends the kept question again
    # to the standby, which finds it in the archive by its id and sends that answer: before,
    # it ran the question again (archived twice; the soak's "archived twice" row).
    front: list[LinkProxy] = []
    async with (
        holder_and_standby(tmp_path, postgres_server, front=front) as (
            first,
            second,
            lobby,
            provider,
            db,
        ),
        contextlib.AsyncExitStack() as stack,
    ):
        await lobby.add("Steve", OP)
        commits = stack.enter_context(_commits(postgres_server, db))
        since = lobby.mark()
        held = provider.held("Committed ", "answer.")
        question = "lobby committed"
        assert (await lobby.chat("Steve", f"@ai {question}"))["outcome"] == "public"
        await held.streaming.wait()
        front[0].hold_answers()
        held.release.set()
        assert await _archived_with(postgres_server, db, commits, question) == 1
        first.process.send_signal(signal.SIGKILL)
        front[0].drop()
        requests = len(provider.requests)

        await lobby.message("*", "Committed answer.", since)
        await second.stderr.wait_for(r"server lobby: lease taken", timeout=WAIT)
        await _next_question_answered(lobby, provider)
        assert len(provider.requests) == requests + 1  # the next question's alone
        assert len(_lines(lobby, since, "Committed answer.")) == 1
        assert _lines(lobby, since, NOT_DELIVERED) == []
        asked = [text for _, texts in _archived(postgres_server, db) for text in texts]
        assert sum(question in t for t in asked) == 1, asked
