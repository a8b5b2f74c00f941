"""The soak's checker: reads one run's record (``bench.soak`` writes it: the questions asked,
every line each server's players received, the provider's request log, the archive's rows and
the usage ledger) and says of each invariant whether it held, with its count and the first
offenders. It judges only the record, so a doctored record must fail it (tests/benchmarks).

Run on a saved record: ``python -m bench.soak_check soak-out/record.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NOTICE_WORDS = (
    "offline",
    "not delivered",
    "cut",
    "try again",
    "failed",
    "unavailable",
    "busy",
    "retry",
    "could not",
)
KNOWN_LOSSES = ("bridge_killed", "postgres_restarted", "backends_paused", "postmaster_paused")
CUTTING = ("bridge_paused", "backends_paused", "postmaster_paused", "postgres_restarted")
"""Faults after which a bridge cuts its running turns (its leases lost)."""
ANY_BRIDGE_CUT = ("postmaster_paused", "postgres_restarted")
"""Of those, the ones every bridge meets (the others: the bridge named)."""
CUT_MARGIN_S = 5.0
"""How long after such a fault is undone the bridge may still cut a turn: its next lease poll
(``lease_renew_s`` 0.5 plus ``lease_deadline_s`` 2 by the soak's defaults) finds the leases
gone."""
AT_RISK_S = 10.0
"""Usage the provider reported to a bridge this long before that bridge was killed may be
missing from the ledger (kept in memory for the next record, lost with the process)."""


@dataclass
class Result:
    name: str
    count: int
    """What the invariant was checked over (questions, turns, tokens)."""
    offenders: list[str] = field(default_factory=list)
    note: str = ""

    known: bool = False
    """A failure the project knows and has not fixed yet (said in the report, kept apart so
    the CI soak guards everything else)."""

    @property
    def held(self) -> bool:
        return not self.offenders


def is_notice(text: str) -> bool:
    """A line telling a player their question did not come through (any bridge's or the
    plugin's wording): the soak's answers all start ``A:``."""
    lowered = text.lower()
    return "A:q-" not in text and any(word in lowered for word in NOTICE_WORDS)


def _tag_in(tag: str, text: str) -> bool:
    return re.search(re.escape(tag) + r"(?![a-z0-9-])", text) is not None


def ask_trail(record: dict[str, Any], question: dict[str, Any]) -> list[str]:
    """What the plugin did with ``question`` (the testkit's ``ask`` events, ``--ask-trail``):
    its id opened with the question's text, then each step (accepted, resent, ended...)."""
    events = record["received"].get(question["server"], [])
    opened = [
        e["ask"]
        for e in events
        if e.get("event") == "ask"
        and str(e.get("what", "")).startswith("open ")
        and _tag_in(question["tag"], str(e.get("what", "")))
    ]
    if not opened:
        return []
    return [
        str(e.get("what", "")) for e in events if e.get("event") == "ask" and e.get("ask") in opened
    ]


def _with_trail(record: dict[str, Any], question: dict[str, Any]) -> str:
    """The question's tag, and what the plugin did with it when the record says."""
    tag = str(question["tag"])
    steps = ask_trail(record, question)
    if not steps:
        return tag
    after = [step for step in steps if not step.startswith("open ")]
    return f"{tag} (the plugin: {', '.join(after) or 'opened only'})"


def check(record: dict[str, Any]) -> list[Result]:
    questions: list[dict[str, Any]] = record["questions"]
    received: dict[str, list[dict[str, Any]]] = record["received"]
    by_player: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for question in questions:
        by_player[(question["server"], question["player"])].append(question)

    answers: dict[str, int] = {}
    told: dict[str, bool] = {}
    leaked: list[str] = []
    for (server, player), asked in by_player.items():
        asked.sort(key=lambda q: q["mark"])
        events = received.get(server, [])
        for n, question in enumerate(asked):
            tag = question["tag"]
            answer = f"A:{tag}"
            answers[tag] = sum(
                1
                for e in events
                if e.get("event") == "message"
                and e.get("to") in (player, "*")
                and _tag_in(answer, e.get("text", ""))
            )
            if question["kind"] == "private":
                leaked += [
                    f"{tag} reached {e.get('to')}"
                    for e in events
                    if e.get("event") == "message"
                    and e.get("to") != player
                    and _tag_in(answer, e.get("text", ""))
                ]
            # The window of this question: from its asking to the player's next question.
            end = asked[n + 1]["mark"] if n + 1 < len(asked) else len(events) + 1
            window = events[question["mark"] : end] if events else []
            told[tag] = (
                question.get("outcome") == "cancelled"
                or any(
                    e.get("event") == "message"
                    and e.get("to") == player
                    and is_notice(e.get("text", ""))
                    for e in window
                )
                or any(
                    e.get("event") == "chat.outcome"
                    and e.get("ref") == f"{tag}-ref"
                    and e.get("outcome") == "cancelled"
                    for e in window
                )
            )
    tags = [q["tag"] for q in questions]
    unended = [q for q in questions if answers.get(q["tag"], 0) == 0 and not told.get(q["tag"])]
    # Questions lost around the end of a bridge's hold on the server (killed, or its database
    # lost, so it gave the server up with 4005), on a row of their own. The plugin keeps each
    # question until a bridge ends it and sends it again once (protocol 1.5, asks), so any here
    # is a hole in that; one is still open (docs/operations.md, "Storm soak"), so the row is
    # reported as known and the CI soak does not fail on it.
    ending = [
        (f["at"], f.get("undone", f["at"])) for f in record["faults"] if f["kind"] in KNOWN_LOSSES
    ]
    lost_with_hold = [
        q["tag"]
        for q in unended
        if any(
            q["asked_at"] <= undone and at <= (q.get("ended_at") or undone) for at, undone in ending
        )
    ]
    results = [
        Result(
            "every question answered or its asker told",
            len(tags),
            [_with_trail(record, q) for q in unended if q["tag"] not in lost_with_hold],
        ),
        Result(
            "  (known) none lost silently with a bridge's hold",
            len(ending),
            [_with_trail(record, q) for q in unended if q["tag"] in lost_with_hold],
            known=True,
        ),
        Result(
            "never both answered and told it failed",
            sum(1 for t in tags if answers.get(t, 0)),
            [t for t in tags if answers.get(t, 0) and told.get(t)],
        ),
        Result(
            "no question answered twice",
            sum(answers.values()),
            [f"{t} x{answers[t]}" for t in tags if answers.get(t, 0) > 1],
        ),
    ]
    archived: dict[str, set[str]] = defaultdict(set)
    for row in record["archive"]:
        if row.get("kind") == "player":
            for found in re.findall(r"q-[a-z0-9-]+", row.get("text", "")):
                archived[found].add(row["turn_id"])
    results.append(
        Result(
            "no question archived twice",
            len(archived),
            [f"{t} in {len(turns)} turns" for t, turns in archived.items() if len(turns) > 1],
        )
    )
    private = sum(1 for q in questions if q["kind"] == "private")
    results.append(Result("no private answer reached another player", private, leaked))
    results.append(_ledger(record))
    return results


def _ledger(record: dict[str, Any]) -> Result:
    """The ledger's reported tokens equal what the provider reported, but for usage reported to
    a bridge shortly before it was killed (the process took it along), streams a stall held
    (the bridge may have given them up at its own deadline and billed an estimate), and streams
    completed while their bridge was paused or its database lost, up to ``CUT_MARGIN_S`` after
    (the bridge cut the turn when it ran again, and billed its estimate)."""
    served = record["provider"]
    provider_total = sum(s["tokens"] for s in served if s["outcome"] == "completed")
    kills = [(f["bridge"], f["at"]) for f in record["faults"] if f["kind"] == "bridge_killed"]
    # A bridge paused, or whose database was paused or restarted, loses its leases and cuts
    # its running turns when it runs again: a stream the provider completed into the socket
    # meanwhile is billed as the cut turn's estimate (the bridge never read its usage).
    cuts = [
        (None if f["kind"] in ANY_BRIDGE_CUT else f["bridge"], f["at"], f.get("undone", f["at"]))
        for f in record["faults"]
        if f["kind"] in CUTTING
    ]
    at_risk = sum(
        s["tokens"]
        for s in served
        if s["outcome"] == "completed"
        and (
            s.get("held")
            or any(s["bridge"] == b and at - AT_RISK_S <= s["ended"] <= at for b, at in kills)
            or any(
                b in (None, s["bridge"]) and at <= s["ended"] <= undone + CUT_MARGIN_S
                for b, at, undone in cuts
            )
        )
    )
    # Per purpose: [tokens, of which estimated]. Only reported tokens are the provider's; a
    # failed turn's estimate is the bridge's own guess and is kept apart.
    ledger = sum(total - estimated for total, estimated in record["ledger"].values())
    offenders = []
    if ledger > provider_total:
        offenders.append(f"ledger {ledger} > provider {provider_total}")
    if ledger < provider_total - at_risk:
        offenders.append(f"ledger {ledger} < provider {provider_total} - at risk {at_risk}")
    estimated = sum(estimated for _, estimated in record["ledger"].values())
    note = (
        f"provider {provider_total}, ledger {ledger} (and {estimated} estimated),"
        f" at risk (bridge killed, paused or its database lost, or a stream held by a stall)"
        f" {at_risk}"
    )
    return Result("ledger tokens equal the provider's", provider_total, offenders, note)


def print_report(results: list[Result], out: Any = None) -> None:
    out = out or sys.stdout
    for result in results:
        verdict = "held" if result.held else f"FAILED ({len(result.offenders)})"
        if result.known and not result.held:
            verdict += ", known"
        print(f"{result.name:<52}{result.count:>8}  {verdict}", file=out)
        if result.note:
            print(f"    {result.note}", file=out)
        for offender in result.offenders[:5]:
            print(f"    {offender}", file=out)


def summary(record: dict[str, Any]) -> str:
    outcomes = Counter(q.get("outcome") for q in record["questions"])
    faults = Counter(f["kind"] for f in record["faults"])
    return f"questions {dict(outcomes)}; faults {dict(faults)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path)
    args = parser.parse_args(argv)
    record = json.loads(args.record.read_text())
    print(summary(record))
    results = check(record)
    print_report(results)
    return 0 if all(r.held for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
