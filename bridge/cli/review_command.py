"""`functions review NAME`: accept a Function's current source (``functions.require_review``).

Shows the diff against the last reviewed source, asks (``--yes`` skips the question; with no
terminal to ask on, ``--yes`` is required), then stores the review in the state database and
audits it as ``function.reviewed``. A running bridge reads reviews made here at its next
``/mineclaw reload``; a review in the console takes effect at once.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.storage_settings import storage_target
from bridge.cli.invocation import command_name
from bridge.cli.output import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    make_console,
    print_error,
    refuse_folder,
)
from bridge.control.layout import DEFAULT_CONFIG_DIR
from bridge.errors import StoreError
from bridge.functions.review_state import ReviewBook, accept_review, review_diff


def register(actions: Any) -> None:
    review = actions.add_parser(
        "review", help="accept a Function's current source (functions.require_review)"
    )
    review.add_argument("name", help="the Function's exact name")
    review.add_argument(
        "--as",
        dest="reviewer",
        default=None,
        metavar="NAME",
        help="who reviews (default: the system user)",
    )
    review.add_argument("--yes", action="store_true", help="accept without asking")
    review.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    review.set_defaults(handler=run_review)


def run_review(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
    verdict = folder_verdict(args.config)
    plane = verdict.plane
    if plane is None:
        for problem in verdict.errors:
            console.print(f"[red]{escape(str(problem))}[/red]")
        print_error(f"the folder is invalid: fix it before reviewing ({command_name()} validate)")
        return EXIT_PROBLEMS
    spec = plane.functions.get(args.name)
    if spec is None:
        print_error(f"functions.yml has no Function named {args.name!r}")
        return EXIT_USAGE
    reviewer = args.reviewer or system_user()
    target = storage_target(plane, args.config)
    try:
        with target.open_reviews() as reviews:
            book = ReviewBook(reviews)
            if book.is_reviewed(spec):
                console.print(f"{escape(spec.name)} {spec.source_sha256}: already reviewed")
                return EXIT_OK
            diff = review_diff(spec, reviews.latest(spec.name))
            for line in diff.lines:
                colour = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1])
                text = escape(line)
                console.print(f"[{colour}]{text}[/{colour}]" if colour else text, highlight=False)
            if not args.yes and not confirmed(spec.name):
                console.print("not reviewed")
                return EXIT_PROBLEMS
            audit = target.open_audit()
            try:
                accept_review(book, audit, spec, reviewer, via="cli")
            finally:
                audit.close()
    except StoreError as exc:
        print_error(str(exc))
        return EXIT_PROBLEMS
    console.print(
        f"[green]reviewed[/green] {escape(spec.name)} {spec.source_sha256} by {escape(reviewer)};"
        " a running bridge offers it after /mineclaw reload"
    )
    return EXIT_OK


def system_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return "cli"


def confirmed(name: str) -> bool:
    if not sys.stdin.isatty():
        print_error("no terminal to ask on: pass --yes to accept the source shown")
        return False
    answer = input(f"accept this source of {name}? [y/N] ")
    return answer.strip().lower() in {"y", "yes"}
