"""The listen bench's test set: hand-written busy chat (`listen_testset.txt`), labelled line by
line with whom each line is addressed to, on a server whose assistant has other aliases than
the tuning set's. The classifier is tuned on `bench.listen_corpus` only; this set says whether
what it learned there holds on chat it never saw. ``python -m bench.listen_testset`` prints the
mix.

Times: a scene's lines are 1 to 4 seconds apart (a fixed function of the line, so every run is
the same), and ``== N`` puts N seconds between scenes.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from bench.listen_corpus import Kind, Line, describe

PATH = Path(__file__).with_name("listen_testset.txt")
ASSISTANT = "Mineclaw"
ALIASES = ("claw", "bot", "小爪", "机器人")
TO_ASSISTANT = "AI"


class TestSetError(ValueError):
    """A malformed line of the test set file, named by its line number."""


def _kind(to: str) -> Kind:
    if to == TO_ASSISTANT:
        return "for_assistant"
    return "banter" if to == "-" else "to_players"


def load(path: Path = PATH) -> list[Line]:
    lines: list[Line] = []
    at = 0.0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("=="):
            try:
                at += float(text[2:])
            except ValueError:
                raise TestSetError(f"{path.name}:{number}: '== seconds' expected") from None
            continue
        parts = [part.strip() for part in text.split(" | ", 2)]
        if len(parts) != 3 or not all(parts):
            raise TestSetError(f"{path.name}:{number}: 'player | addressed to | text' expected")
        player, to, said = parts
        at += 1 + zlib.crc32(f"{player}{said}".encode()) % 4
        lines.append(Line(at, player, said, _kind(to), to == TO_ASSISTANT))
    return lines


def main() -> None:
    lines = load()
    describe(lines, lines[-1].at / 60)


if __name__ == "__main__":
    main()
