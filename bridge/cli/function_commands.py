"""`functions validate` and `functions run`: reviewing and dry-running the Function catalogue.

Both read the configuration folder. When another file has problems, `functions.yml` (and the
`functions:` limits of `config.yml`) are still read on their own, so a Function can be reviewed
while, say, a provider key is missing; the other problems are counted, not hidden.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bridge.app.serving.folder_verdict import FolderVerdict, folder_verdict
from bridge.cli import review_command
from bridge.cli.invocation import command_name
from bridge.cli.output import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, make_console, refuse_folder
from bridge.control import ConfigLoadError, Problem
from bridge.control.config_file import ConfigFile
from bridge.control.files import read_regular_file
from bridge.control.function_limits import FunctionLimits
from bridge.control.functions_file import FunctionsFile
from bridge.control.layout import (
    CONFIG_FILE,
    DEFAULT_CONFIG_DIR,
    FUNCTIONS_FILE,
    MAX_YAML_BYTES,
    WHITELIST_FILE,
    default_bytes,
)
from bridge.control.problems import format_path
from bridge.control.validation import validate_document
from bridge.control.whitelist_file import WhitelistFile
from bridge.control.whitelist_rules import InvalidRule
from bridge.control.workspace_files import WORKSPACE_DIR, load_workspace
from bridge.control.yaml_strict import load_strict_yaml
from bridge.functions.dispatch_review import built_console_commands
from bridge.functions.dry_run import dry_run, verdict
from bridge.functions.engine import SandboxError
from bridge.functions.host import PLAYER_REF
from bridge.functions.review import CatalogueReview, SkillText, review_catalogue, skill_texts
from bridge.functions.runtime import FunctionOutcome
from bridge.functions.syntax_problems import function_syntax_problems
from bridge.policy.never_list import NeverList
from bridge.policy.whitelist import compile_whitelist

ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class _Loaded:
    catalogue: FunctionsFile | None
    limits: FunctionLimits
    skills: tuple[SkillText, ...]
    known_tools: frozenset[str] | None
    problems: tuple[Problem, ...]
    """Problems of functions.yml (and config.yml's functions: section)."""
    other_problems: int
    never: NeverList | None = None
    """The never list of whitelist.yml (the built-in one when it cannot be read)."""


def register(subparsers: Any) -> None:
    functions = subparsers.add_parser("functions", help="review and dry-run Functions")
    actions = functions.add_subparsers(dest="functions_command", metavar="ACTION", required=True)

    validate = actions.add_parser("validate", help="the catalogue, hashes, missing references")
    validate.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    validate.set_defaults(handler=run_validate)

    run = actions.add_parser("run", help="dry-run one Function: nothing is dispatched")
    run.add_argument("name", help="the Function's exact name")
    run.add_argument("--args", default="{}", metavar="JSON", help="the arguments object")
    run.add_argument("--as", dest="player", required=True, metavar="PLAYER")
    run.add_argument("--approve", choices=("yes", "no", "timeout"), default="yes")
    run.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    run.set_defaults(handler=run_dry_run)

    review_command.register(actions)


def run_validate(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
    verdict = folder_verdict(args.config)  # the verdict validate, serve and reload give
    loaded = _load(args.config, verdict)
    _print_problems(console, loaded)
    syntax = function_syntax_problems(args.config)
    for problem in syntax:
        colour = "yellow" if problem.warning else "red"
        console.print(f"[{colour}]{escape(str(problem))}[/{colour}]")
    if loaded.catalogue is None:
        return EXIT_PROBLEMS
    for built in built_console_commands(loaded.catalogue):
        where = format_path(("functions", built.index, "on_call"))
        line = f"{FUNCTIONS_FILE} {where}: warning: {built.message()}"
        console.print(f"[yellow]{escape(line)}[/yellow]")
    review = review_catalogue(
        loaded.catalogue, loaded.limits, skills=loaded.skills, known_tools=loaded.known_tools
    )
    review = _with_syntax_errors(review, syntax)
    table = Table(title=f"Functions: {escape(str(args.config / FUNCTIONS_FILE))}")
    for column in ("name", "status", "capabilities", "source", "sha256"):
        table.add_column(column, overflow="fold")
    for row in review.rows:
        status = {"enabled": "[green]enabled[/green]", "disabled": "disabled"}.get(
            row.status, "[red]problem[/red]\n" + "\n".join(escape(p) for p in row.problems)
        )
        table.add_row(
            escape(row.name),
            status,
            escape("\n".join(row.capabilities) or "-"),
            f"{row.source_chars} chars",
            row.source_sha256,
        )
    console.print(table)
    for missing in review.missing_references:
        console.print(f"[red]{escape(str(missing.problem()))}[/red]")
    if loaded.known_tools is None:
        console.print("native tool names not checked: tools.yml could not be read")
    ok = review.ok and not loaded.problems and verdict.valid
    console.print(("[green]valid[/green]" if ok else "[red]invalid[/red]") + ": nothing executed")
    return EXIT_OK if ok else EXIT_PROBLEMS


def _with_syntax_errors(review: CatalogueReview, syntax: list[Problem]) -> CatalogueReview:
    """The review with each enabled Function's syntax error as one of its row's problems."""
    rows = []
    for row in review.rows:
        found = [
            f"line {p.line}: syntax error" if p.line is not None else "syntax error"
            for p in syntax
            if not p.warning and p.message.startswith(f"function {row.name!r},")
        ]
        rows.append(replace(row, problems=(*row.problems, *found)) if found else row)
    return replace(review, rows=tuple(rows))


def run_dry_run(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        console.print(f"[red]--args is not JSON:[/red] {escape(str(exc))}")
        return EXIT_USAGE
    if re.fullmatch(PLAYER_REF, args.player) is None:
        console.print("[red]--as must be a player name (1-16 of A-Z a-z 0-9 _) or a UUID[/red]")
        return EXIT_USAGE
    loaded = _load(args.config)
    _print_problems(console, loaded)
    if loaded.catalogue is None:
        return EXIT_PROBLEMS
    spec = loaded.catalogue.get(args.name)
    if spec is not None and not spec.enabled:
        # A dry run is how an owner tries a Function before enabling it.
        console.print("[yellow]disabled in functions.yml; run anyway (dry run)[/yellow]")
    try:
        outcome = asyncio.run(
            dry_run(
                loaded.catalogue,
                loaded.limits,
                args.name,
                arguments,
                args.player,
                approve=args.approve,
                known_tools=loaded.known_tools,
                never=loaded.never,
            )
        )
    except SandboxError as exc:
        console.print(f"[red]the sandbox could not start:[/red] {escape(str(exc))}")
        return EXIT_PROBLEMS
    _print_outcome(console, outcome, args)
    return EXIT_PROBLEMS if outcome.result.get("status") == "error" else EXIT_OK


def _print_outcome(console: Console, outcome: FunctionOutcome, args: argparse.Namespace) -> None:
    digest = outcome.source_sha256 or "-"
    console.print(
        f"dry run of {escape(outcome.function)} as {escape(args.player)} "
        f"(approvals answered: {args.approve}; sha256 {digest})"
    )
    table = Table(title="operations attempted (none performed)")
    for column in ("#", "action", "capability", "a live run", "input"):
        table.add_column(column, overflow="fold")
    for record in outcome.operations:
        shown = json.dumps(record.input, ensure_ascii=False) if record.input is not None else "-"
        table.add_row(
            str(record.index),
            escape(record.action or "-"),
            escape(record.capability or "-"),
            escape(verdict(record, args.approve)),
            escape(shown if len(shown) <= 300 else shown[:300] + "..."),
        )
    console.print(table if outcome.operations else "no operations attempted")
    console.print("result:")
    console.print(escape(json.dumps(outcome.result, indent=2, ensure_ascii=False)))


def _print_problems(console: Console, loaded: _Loaded) -> None:
    for problem in loaded.problems:
        console.print(f"[red]{escape(str(problem))}[/red]")
    if loaded.other_problems:
        console.print(
            f"[yellow]{loaded.other_problems} problem(s) in other files; "
            f"`{escape(command_name())} validate` lists them[/yellow]"
        )


def _load(directory: Path, verdict: FolderVerdict | None = None) -> _Loaded:
    if verdict is None:
        verdict = folder_verdict(directory)
    plane = verdict.plane
    if plane is None:
        return _load_partially(directory, verdict.problems)
    tools = frozenset(name for name, spec in plane.tools.tools.items() if spec.enabled)
    return _Loaded(
        never=compile_whitelist(plane.whitelist_file).never,
        catalogue=plane.functions,
        limits=plane.config.functions,
        skills=tuple(skill_texts(plane.skills)),
        known_tools=tools,
        problems=(),
        # The review shows the catalogue's own problems and the skills naming missing
        # Functions; anything else that makes the folder invalid is counted.
        other_problems=sum(
            1
            for p in verdict.errors
            if p.file != FUNCTIONS_FILE and not p.file.startswith(f"{WORKSPACE_DIR}/")
        ),
    )


def _never_of(whitelist: WhitelistFile) -> NeverList | None:
    try:
        return compile_whitelist(whitelist).never
    except InvalidRule:  # a rule validate reports: the built-in never list judges meanwhile
        return None


def _load_partially(directory: Path, problems: tuple[Problem, ...]) -> _Loaded:
    ours = tuple(p for p in problems if p.file == FUNCTIONS_FILE and not p.warning)
    config_ours = tuple(
        p for p in problems if p.file == CONFIG_FILE and p.path.startswith("functions")
    )
    others = sum(1 for p in problems if not p.warning) - len(ours) - len(config_ours)
    catalogue = _read_model(directory, FUNCTIONS_FILE, FunctionsFile)
    config = _read_model(directory, CONFIG_FILE, ConfigFile)
    _, skills, _ = load_workspace(directory)
    whitelist = _read_model(directory, WHITELIST_FILE, WhitelistFile)
    return _Loaded(
        never=None if whitelist is None else _never_of(whitelist),
        catalogue=catalogue if not ours else None,
        limits=config.functions if config is not None else FunctionLimits(),
        skills=tuple(skill_texts(skills)),
        known_tools=None,
        problems=ours + config_ours,
        other_problems=max(others, 0),
    )


def _read_model(directory: Path, name: str, model: type[ModelT]) -> ModelT | None:
    try:
        data = read_regular_file(directory / name, label=name, max_bytes=MAX_YAML_BYTES[name])
        if data is None:
            data = default_bytes(name)
        document = load_strict_yaml(data, name, max_bytes=MAX_YAML_BYTES[name])
    except ConfigLoadError:
        return None
    value, _ = validate_document(model, document, name)
    return value
