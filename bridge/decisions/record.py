"""What was decided about the latest listen-mode lines, for ``/mineclaw listen why``.

Bounded (the newest `KEPT` lines), in memory, per server; each record keeps the start of the
line, who said it, who decided (the classifier, the model, the classifier as the model's
fallback, every line, or a gate before anyone decided) and why, and whether a turn started.
Lines of players who opted out or may not use the assistant never get here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import Literal

KEPT = 20
SHOWN_CHARS = 48

DecidedBy = Literal["classifier", "model", "fallback", "every_line", "gate", "nobody"]


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    serial: int
    player: str
    player_uuid: str
    text: str
    decided_by: DecidedBy
    started: bool | None
    """True: a turn started; False: overheard; None: still being decided."""
    why: str

    def shown(self) -> str:
        said = self.text if len(self.text) <= SHOWN_CHARS else self.text[: SHOWN_CHARS - 1] + "…"
        if self.started is None:
            outcome = "deciding"
        else:
            outcome = "turn" if self.started else "overheard"
        return f'{self.player}: "{said}" -> {outcome} ({self.decided_by}: {self.why})'


class DecisionLog:
    def __init__(self, kept: int = KEPT) -> None:
        self._records: deque[DecisionRecord] = deque(maxlen=kept)
        self._serial = 0

    def add(
        self,
        *,
        player: str,
        player_uuid: str,
        text: str,
        decided_by: DecidedBy,
        started: bool | None,
        why: str,
    ) -> int:
        """Record a line; returns its serial, for `settle` when it is decided later."""
        self._serial += 1
        self._records.append(
            DecisionRecord(
                self._serial, player, player_uuid, text[:SHOWN_CHARS], decided_by, started, why
            )
        )
        return self._serial

    def settle(self, serial: int, *, decided_by: DecidedBy, started: bool, why: str) -> None:
        for index, record in enumerate(self._records):
            if record.serial == serial:
                self._records[index] = replace(
                    record, decided_by=decided_by, started=started, why=why
                )
                return

    def forget(self, player_uuid: str) -> None:
        """A player opted out: their lines are not shown any more."""
        kept = [r for r in self._records if r.player_uuid != player_uuid]
        self._records = deque(kept, maxlen=self._records.maxlen)

    def clear(self) -> None:
        self._records.clear()

    def latest(self, count: int) -> tuple[DecisionRecord, ...]:
        """The newest ``count`` records, oldest first."""
        records = tuple(self._records)
        return records[-count:] if count > 0 else ()
