"""The loop breaker: a turn going round in circles is stopped, with an honest message.

Two signs, both limits from ``config.yml`` (``turn.max_failing_rounds``,
``turn.max_repeated_calls``): tool rounds in a row in which every call failed, and the same
tool called with the same arguments round after round. Arguments are compared as parsed JSON
(key order and spacing do not make a call new). A model stuck this way would otherwise spend
every round the turn allows, and the tokens of each.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bridge.providers.items import ToolCall, ToolResult

LOOP_FAILING = "loops.failing"
LOOP_REPEATING = "loops.repeating"

LoopKind = Literal["failing", "repeating"]


@dataclass(frozen=True, slots=True)
class LoopDetected:
    kind: LoopKind
    count: int
    tool: str = ""

    @property
    def message_key(self) -> str:
        return LOOP_FAILING if self.kind == "failing" else LOOP_REPEATING

    @property
    def reason(self) -> str:
        if self.kind == "failing":
            return f"loop breaker: {self.count} tool rounds in a row failed"
        return f"loop breaker: {self.tool} called {self.count} times with the same arguments"

    def values(self) -> dict[str, str]:
        return {"count": str(self.count), "tool": self.tool}


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):
        return arguments.strip()


def failed(result: ToolResult) -> bool:
    """Whether a tool result reports a failure: the invoker's ``"ok": false`` outcome, or the
    engine's own ``error: ...`` line."""
    output = result.output
    if output.startswith("error:"):
        return True
    if not output.startswith("{"):
        return False
    try:
        parsed = json.loads(output)
    except (ValueError, RecursionError):
        return False
    return isinstance(parsed, dict) and parsed.get("ok") is False


@dataclass(slots=True)
class LoopBreaker:
    max_failing_rounds: int
    max_repeated_calls: int
    _failing: int = 0
    _seen: Counter[tuple[str, str]] = field(default_factory=Counter)

    def before_round(self, calls: Sequence[ToolCall]) -> LoopDetected | None:
        """Count the round's calls, each distinct call once (a reply may read the same thing
        twice); a loop when one comes back in once too many rounds (then none of them runs)."""
        for key in dict.fromkeys((call.name, _canonical(call.arguments)) for call in calls):
            self._seen[key] += 1
            if self._seen[key] >= self.max_repeated_calls:
                return LoopDetected("repeating", self._seen[key], key[0])
        return None

    def after_round(self, results: Sequence[ToolResult]) -> LoopDetected | None:
        """After a round's calls: a loop when too many rounds in a row failed entirely."""
        if results and all(failed(result) for result in results):
            self._failing += 1
        else:
            self._failing = 0
        if self._failing >= self.max_failing_rounds:
            return LoopDetected("failing", self._failing)
        return None
