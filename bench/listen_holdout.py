"""The listen bench's holdout set: a third labelled set (`listen_holdout.txt`), written by
another method than the test set (scene descriptions first, lines and labels from them), on
another server whose assistant has other aliases, more than half of it Simplified Chinese. The
rules are never tuned on it; a rule change is kept only if it does not hurt it or the test set.
``python -m bench.listen_holdout`` prints the mix. Same format and timing as the test set
(`bench.listen_testset`)."""

from __future__ import annotations

from pathlib import Path

from bench.listen_corpus import Line, describe
from bench.listen_testset import load as _load

PATH = Path(__file__).with_name("listen_holdout.txt")
ASSISTANT = "Mineclaw"
ALIASES = ("bot", "clawy", "爪爪", "助手")


def load(path: Path = PATH) -> list[Line]:
    return _load(path)


def main() -> None:
    lines = load()
    describe(lines, lines[-1].at / 60)


if __name__ == "__main__":
    main()
