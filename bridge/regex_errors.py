"""RE2's compile errors as text: the library raises them with ``bytes`` arguments, whose
``str()`` would show an owner or the model a raw ``b'...'``."""

from __future__ import annotations


def re2_error_text(exc: Exception) -> str:
    """The reason an RE2 pattern did not compile, as plain text."""
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        return detail.decode("utf-8", "replace")
    return str(detail)
