"""What ``whitelist check`` prints about the never list: the commands a command carries, the
identity of each (or that none was resolved), and every never entry it matches, with why.

The check runs without a server, so labels are not resolved: it judges the spelling with the
never categories in force and says so. The bridge resolves every label through the server's
command map at run time, where an alias (``esudo``) is judged as its command (``sudo``) and an
unknown label is refused.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from bridge.policy.never_list import Judgement

NOT_RESOLVED = (
    "identity: not resolved (no server is connected to this check); judged on the spelling and"
    " the never categories. At run time the server resolves each label (aliases, owning"
    " plugin, permission node) and refuses unknown ones."
)


def print_judgement(console: Console, judgement: Judgement, *, allow_never: bool) -> None:
    """The never-list part of the check."""
    if judgement.uncertain is not None:
        console.print(f"carried: [red]cannot be told[/red]: {escape(judgement.uncertain)}")
    else:
        for command in judgement.commands[1:]:
            console.print(f"carries: {escape(command)}")
    for identity in judgement.identities:
        if identity is not None:
            console.print(f"identity: {escape(identity.describe())}")
    if not judgement.resolved:
        console.print(escape(NOT_RESOLVED))
    for hit in judgement.hits:
        console.print(f"never: {escape(hit.reason())}")
    if judgement.hits and allow_never:
        console.print("never: passed by the rule's allow_never: true")
    if not judgement.hits and judgement.uncertain is None:
        console.print("never: no never entry matches")
