"""The deadline of the validation running on each thread, and the exception that ends it.

Apart from the keywords (``bridge.schemas.keywords``) so that what only raises or catches
``TookTooLong`` does not import jsonschema."""

from __future__ import annotations

import threading


class TookTooLong(Exception):
    """The validation on this thread passed its deadline."""


class _Deadline(threading.local):
    at: float = float("inf")


deadline = _Deadline()
"""The monotonic time the validation running on this thread must end by."""
