"""Text that can always be encoded as UTF-8: unpaired surrogates replaced at the boundaries.

A Python ``str`` may hold a surrogate code point on its own (a JSON ``"\\ud800"`` escape from a
provider, a JavaScript string from a Function). No UTF-8 encoder accepts one, so such text fails
far from where it came in: when the session is sent in the next request, when the archive or
the audit log writes it. The bridge therefore cleans text where it enters (provider stream
events in the turn engine, the archive when it reads turns back) with `valid_text` and
`valid_json`; a surrogate pair held as two code points is joined, a lone half becomes U+FFFD.

The audit log is the one place that keeps evidence rather than cleaning it: `escape_surrogates`
writes each one as the visible six characters ``\\udXXX``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate in JSON text: a hint that the parsed text may hold a lone one."""


def valid_text(text: str) -> str:
    """``text`` with every unpaired surrogate replaced by U+FFFD (the same object when clean)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    # UTF-16 with surrogatepass keeps each code unit as it is; decoding joins the halves that
    # form a pair and replaces each lone one.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_json(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings, scalars) with `valid_text` applied to every
    string and key; the same object when nothing needed replacing."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        cleaned = {valid_text(key): valid_json(item) for key, item in value.items()}
        if len(cleaned) == len(value) and all(
            ka is kb and a is b
            for (ka, a), (kb, b) in zip(value.items(), cleaned.items(), strict=True)
        ):
            return value
        return cleaned
    if isinstance(value, list | tuple):
        items = [valid_json(item) for item in value]
        if all(a is b for a, b in zip(value, items, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def valid_json_text(text: str) -> str:
    """JSON text (a tool call's arguments) whose parsed strings are all valid text.

    The text itself may be clean while an escape in it (``"\\ud800"``) parses into a lone
    surrogate; only then is it parsed, cleaned and written again. Text that is not JSON is
    returned as it is (with `valid_text`): the tool that reads it reports that."""
    text = valid_text(text)
    if SURROGATE_ESCAPE.search(text) is None:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    cleaned = valid_json(value)
    return text if cleaned is value else json.dumps(cleaned, ensure_ascii=False)


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds any surrogate code point (and so cannot be encoded as UTF-8)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def escape_surrogates(text: str) -> str:
    """``text`` with each surrogate code point written as the six characters ``\\udXXX``.

    Meant for JSON text: the backslash is doubled, so the escape reads back as visible text."""
    return _SURROGATE.sub(lambda found: f"\\\\u{ord(found.group()):04x}", text)


BYTE_ORDER_MARK = "\ufeff"
_LINE_BREAK = re.compile(r"\r\n?")


def plain_lines(text: str) -> str:
    """An owner's file text as the bridge reads it: a leading byte order mark dropped and
    Windows (``\\r\\n``) or old Mac (``\\r``) line ends written as ``\\n``.

    Editors on Windows save both; neither carries meaning, and a parser that looks for ``\\n``
    (front matter, ``.env`` lines, line numbers in problems) must not see them. Every file the
    bridge reads from an owner goes through here, so no reader can forget one of the two."""
    return plain_line_ends(text.removeprefix(BYTE_ORDER_MARK))


def plain_line_ends(text: str) -> str:
    """``text`` with ``\r\n`` and a lone ``\r`` written as ``\n``."""
    return _LINE_BREAK.sub("\n", text) if "\r" in text else text


# Letters other scripts draw like ASCII ones (Unicode's confusables for the Latin letters,
# the common part), and ASCII look-alikes: a name written with any of them is the same name.
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("аα", "a"),
        **dict.fromkeys("ьв", "b"),
        **dict.fromkeys("сϲ", "c"),
        **dict.fromkeys("ԁ", "d"),
        **dict.fromkeys("еε", "e"),
        **dict.fromkeys("һ", "h"),
        **dict.fromkeys("іι|", "i"),
        **dict.fromkeys("ј", "j"),
        **dict.fromkeys("κк", "k"),
        **dict.fromkeys("ӏ1ǀ", "l"),
        **dict.fromkeys("ոп", "n"),
        **dict.fromkeys("оοσ0", "o"),
        **dict.fromkeys("рρ", "p"),
        **dict.fromkeys("ԛ", "q"),
        **dict.fromkeys("ѕ5", "s"),
        **dict.fromkeys("τт", "t"),
        **dict.fromkeys("υ", "u"),
        **dict.fromkeys("νѵ", "v"),
        **dict.fromkeys("ѡω", "w"),
        **dict.fromkeys("хχ", "x"),
        **dict.fromkeys("уγ", "y"),
        **dict.fromkeys("ᴢ", "z"),
        **dict.fromkeys("-.  ", "_"),
    }
)
_RUNS = re.compile(r"rn|vv|_+")
_RUN_FOR = {"rn": "m", "vv": "w"}


def name_skeleton(name: str) -> str:
    """What a name looks like, for telling whether two names are the same one: compatibility
    forms folded (NFKC), case folded, accents dropped, look-alike letters and digits mapped to
    one ASCII letter (``Dеlete-Page`` with a Cyrillic е, ``de1ete_page``, ``delete.page``), and
    ``-``, ``.`` and runs of ``_`` as one ``_``. Never shown; only compared."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    bare = "".join(
        ch for ch in unicodedata.normalize("NFD", folded) if not unicodedata.combining(ch)
    )
    mapped = bare.translate(_LOOK_ALIKES).replace("i", "l")
    return _RUNS.sub(lambda m: _RUN_FOR.get(m.group(0), "_"), mapped).strip("_")
