"""How Linux schedules a process, read from /proc as the kernel sees it: the tests that check a
worker of a stranger's work (a page's extraction, a Function) runs at the lowest priority inside
the bridge's own scheduling group."""

from __future__ import annotations

PROCESS_GROUP, SESSION, NICENESS, SCHED_POLICY = 5, 6, 19, 41
"""Fields of /proc/PID/stat (proc(5), counted from 1)."""


def stat_fields(pid: int) -> dict[int, str]:
    """/proc/PID/stat by field number; the command name (field 2) may hold spaces and
    parentheses, so fields are counted after its closing one."""
    with open(f"/proc/{pid}/stat") as stat:
        after = stat.read().rsplit(")", 1)[1].split()
    return dict(enumerate(after, start=3))


def autogroup(pid: int) -> str | None:
    """The scheduling group Linux's autogroup put ``pid`` in: None where it is not built, or
    where the file is there but empty (some sandboxed kernels, CI's among them, show it so)."""
    try:
        with open(f"/proc/{pid}/autogroup") as group:
            fields = group.read().split()
    except FileNotFoundError:
        return None
    return fields[0] if fields else None
