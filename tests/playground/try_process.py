"""``mineclaw-bridge try`` as a separate process, typed into and read like a terminal."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

WAIT_S = 90.0
_ANSWER_PREFIX = re.compile(r"^(?:\[private → \w+\] \[Mineclaw → you\] |\[chat\] \[Mineclaw\] )")
"""One generous bound per expected line; never a measured speed."""


class TryProcess:
    def __init__(self, cwd: Path, *args: str) -> None:
        environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bridge", "try", *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            env={**environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        )
        self.lines: list[str] = []
        """Every line printed so far."""
        self._new: queue.Queue[str | None] = queue.Queue()
        self._since = 0
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def type(self, line: str) -> None:
        """Types ``line``; later ``expect`` calls look only at what is printed from now on."""
        while not self._new.empty():
            printed = self._new.get_nowait()
            if printed is not None:
                self.lines.append(printed)
            else:
                self._new.put(None)
                break
        self._since = len(self.lines)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, pattern: str) -> str:
        """The first line printed since the last ``type`` that matches ``pattern``.

        In any order: the bridge column (the audit log, written in rounds) may come before or
        after the player's lines of the same turn."""
        wanted = re.compile(pattern)
        checked = self._since
        while True:
            for index in range(checked, len(self.lines)):
                if wanted.search(self.lines[index]):
                    return self.lines[index]
            checked = len(self.lines)
            try:
                line = self._new.get(timeout=WAIT_S)
            except queue.Empty:
                raise AssertionError(
                    f"no line matching {pattern!r} within {WAIT_S} s; output:\n"
                    + "\n".join(self.lines)
                ) from None
            if line is None:
                raise AssertionError(
                    f"exited before a line matching {pattern!r}; output:\n" + "\n".join(self.lines)
                )
            self.lines.append(line)

    def expect_said(self, phrase: str) -> None:
        """Waits until the assistant's answer lines since the last ``type`` say ``phrase``: an
        answer is wrapped over several lines, so they are joined without their prefixes."""
        while True:
            answer = " ".join(
                _ANSWER_PREFIX.sub("", line)
                for line in self.lines[self._since :]
                if _ANSWER_PREFIX.match(line)
            )
            if phrase in " ".join(answer.split()):
                return
            self._next(f"an answer saying {phrase!r}")

    def _next(self, wanted: str) -> None:
        try:
            line = self._new.get(timeout=WAIT_S)
        except queue.Empty:
            raise AssertionError(
                f"no {wanted} within {WAIT_S} s; output:\n" + "\n".join(self.lines)
            ) from None
        if line is None:
            raise AssertionError(f"exited before {wanted}; output:\n" + "\n".join(self.lines))
        self.lines.append(line)

    def wait(self) -> int:
        return self.proc.wait(timeout=WAIT_S)

    def kill(self) -> None:
        """Ends the process if it still runs, and closes its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._pump_thread.join(WAIT_S)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()
