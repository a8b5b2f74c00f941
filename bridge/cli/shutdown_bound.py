"""An overall bound on ``serve``'s shutdown, whatever the database does.

Every database operation has its own deadline (``bridge.store.deadline``), but a shutdown is a
series of them (the lease connection, a stopped turn's commit, the audit log's last batch,
connections opened anew to a server that no longer answers), so their sum, not any one, would
bound it. While a bridge lives on it keeps its database sessions, and with them the leases of
its servers: no other bridge can serve them. So once SIGTERM (or Ctrl-C) has asked it to stop,
the process exits when ``storage.stop_wait_s`` has passed, done or not: its sessions end with
it, and the PostgreSQL server lets go of its leases.
"""

from __future__ import annotations

import os
import sys
import threading

EXIT_STOP_TIMED_OUT = 1
"""The exit status when the bound cut the shutdown short (a failure: something hung)."""


def arm(seconds: float) -> threading.Timer:
    """Start the bound now; ``cancel()`` the timer returned once the shutdown is done."""

    def give_up() -> None:
        print(
            f"mineclaw-bridge: the shutdown took longer than {seconds:g} s"
            " (storage.stop_wait_s); exiting now without waiting for the rest",
            file=sys.stderr,
            flush=True,
        )
        os._exit(EXIT_STOP_TIMED_OUT)  # the event loop may be stuck: no unwinding

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()
    return timer
