"""Commands for server owners: ``init``, ``validate`` and ``whitelist check``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bridge.control import ConfigLoadError, Problem, init_config_dir, load_control_plane
from bridge.control.files import read_regular_file
from bridge.control.layout import DEFAULT_CONFIG_DIR, MAX_YAML_BYTES, WHITELIST_FILE, YAML_FILES
from bridge.control.validation import validate_document
from bridge.control.whitelist_file import WhitelistFile
from bridge.control.yaml_strict import load_strict_yaml
from bridge.errors import ConfigError
from bridge.policy.whitelist import InvalidCommand, Whitelist

EXIT_OK = 0
EXIT_INVALID = 1  # validate: problems found; whitelist check: denied
EXIT_BAD_COMMAND = 2  # whitelist check: the command (or the whitelist file) cannot be decided


def register(subparsers: Any) -> None:
    init = subparsers.add_parser("init", help="write the default configuration files")
    init.add_argument("directory", nargs="?", type=Path, default=DEFAULT_CONFIG_DIR)
    init.set_defaults(handler=run_init)

    validate = subparsers.add_parser("validate", help="check every configuration file")
    validate.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    validate.set_defaults(handler=run_validate)

    whitelist = subparsers.add_parser("whitelist", help="test whitelist rules")
    actions = whitelist.add_subparsers(dest="whitelist_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="decide one command as the bridge would")
    check.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    check.add_argument("--as", dest="executor", choices=("player", "console"), required=True)
    check.add_argument("command", help="the command, with or without the leading /")
    check.set_defaults(handler=run_whitelist_check)


def run_init(args: argparse.Namespace) -> int:
    console = Console()
    try:
        created = init_config_dir(args.directory)
    except ConfigError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_INVALID
    for path in created:
        console.print(f"created {escape(str(path))}")
    if not created:
        console.print(f"nothing to do: {escape(str(args.directory))} is complete")
    return EXIT_OK


def run_validate(args: argparse.Namespace) -> int:
    console = Console()
    problems: list[Problem]
    try:
        plane = load_control_plane(args.config)
        problems = list(plane.warnings)
        ok = True
    except ConfigLoadError as exc:
        problems = list(exc.problems)
        ok = False
    console.print(problem_table(args.config, problems))
    errors = sum(1 for problem in problems if not problem.warning)
    warnings = len(problems) - errors
    summary = f"{errors} error(s), {warnings} warning(s)"
    console.print(("[green]valid[/green]: " if ok else "[red]invalid[/red]: ") + summary)
    return EXIT_OK if ok else EXIT_INVALID


def problem_table(directory: Path, problems: list[Problem]) -> Table:
    """One row per file (every known file, then any other file with problems)."""
    table = Table(title=f"Mineclaw configuration: {escape(str(directory))}")
    table.add_column("file")
    table.add_column("status")
    table.add_column("problems", overflow="fold")
    files = [*YAML_FILES, ".env", "workspace/AGENTS.md"]
    files += sorted({p.file for p in problems} - set(files))
    for file in files:
        found = [p for p in problems if p.file == file]
        if any(not p.warning for p in found):
            status = "[red]error[/red]"
        elif found:
            status = "[yellow]warning[/yellow]"
        else:
            status = "[green]ok[/green]"
        lines = [escape(_describe(p)) for p in found]
        table.add_row(escape(file), status, "\n".join(lines) or "-")
    return table


def _describe(problem: Problem) -> str:
    where = f"line {problem.line}" if problem.line is not None else ""
    if problem.column is not None and where:
        where += f":{problem.column}"
    field = problem.path
    prefix = ", ".join(part for part in (where, field) if part)
    return f"{prefix}: {problem.message}" if prefix else problem.message


def run_whitelist_check(args: argparse.Namespace) -> int:
    console = Console()
    try:
        whitelist = _load_whitelist(args.config)
    except ConfigLoadError as exc:
        console.print(f"[red]{WHITELIST_FILE} has problems:[/red]")
        for problem in exc.problems:
            console.print(f"  {escape(str(problem))}")
        return EXIT_BAD_COMMAND
    try:
        decision = whitelist.decide(args.executor, args.command)
    except InvalidCommand as exc:
        console.print(f"[red]invalid[/red]: {escape(exc.reason)}")
        return EXIT_BAD_COMMAND
    verdict = "[green]allow[/green]" if decision.allowed else "[red]deny[/red]"
    console.print(f"{verdict} as {args.executor}")
    console.print(f"canonical: {escape(decision.canonical)}")
    if decision.rule is not None:
        console.print(f"rule: {escape(decision.rule)}")
    elif not whitelist.enabled:
        console.print("rule: none (the whitelist is disabled)")
    else:
        console.print(f"rule: none of the {len(whitelist.rules(args.executor))} rules matched")
    return EXIT_OK if decision.allowed else EXIT_INVALID


def _load_whitelist(directory: Path) -> Whitelist:
    # Only whitelist.yml is read, so a rule can be tested while other files are mid-edit.
    data = read_regular_file(
        directory / WHITELIST_FILE, label=WHITELIST_FILE, max_bytes=MAX_YAML_BYTES[WHITELIST_FILE]
    )
    if data is None:
        raise ConfigLoadError([Problem(WHITELIST_FILE, None, None, "", "not found")])
    document = load_strict_yaml(data, WHITELIST_FILE)
    model, problems = validate_document(WhitelistFile, document, WHITELIST_FILE)
    if model is None:
        raise ConfigLoadError(problems)
    return model.compile()
