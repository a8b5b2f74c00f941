"""Commands for server owners: ``init``, ``validate`` and ``whitelist check``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from bridge.app.serving.folder_verdict import folder_verdict
from bridge.app.serving.restart_settings import running_differences
from bridge.cli.budget_table import budget_table
from bridge.cli.output import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    make_console,
    print_error,
    refuse_folder,
)
from bridge.cli.whitelist_report import print_judgement
from bridge.control import (
    ConfigLoadError,
    Problem,
    init_config_dir,
)
from bridge.control.files import read_regular_file
from bridge.control.layout import (
    DEFAULT_CONFIG_DIR,
    MAX_YAML_BYTES,
    WHITELIST_FILE,
    YAML_FILES,
    default_bytes,
)
from bridge.control.never_rules import located_problems
from bridge.control.validation import validate_document
from bridge.control.whitelist_file import WhitelistFile
from bridge.control.yaml_strict import load_strict_yaml
from bridge.errors import ConfigError
from bridge.policy.whitelist import InvalidCommand, Whitelist, canonicalize, compile_whitelist
from bridge.store.archive import DATA_DIR_NAME


def register(subparsers: Any) -> None:
    init = subparsers.add_parser("init", help="write the default configuration files")
    init.add_argument("directory", nargs="?", type=Path, help=f"default: {DEFAULT_CONFIG_DIR}")
    # Every command takes --config DIR; init also takes the folder as its argument.
    init.add_argument("--config", type=Path, metavar="DIR", help="the same as DIRECTORY")
    init.set_defaults(handler=run_init)

    validate = subparsers.add_parser("validate", help="check every configuration file")
    validate.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    validate.set_defaults(handler=run_validate)

    whitelist = subparsers.add_parser("whitelist", help="test whitelist rules")
    actions = whitelist.add_subparsers(dest="whitelist_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="decide one command as the bridge would")
    check.add_argument("--config", type=Path, default=DEFAULT_CONFIG_DIR, metavar="DIR")
    check.add_argument(
        "--as",
        dest="executor",
        choices=("player", "console", "other"),
        required=True,
        help="player: the asker's own command; console; other: for another player, who confirms",
    )
    check.add_argument("command", help="the command, with or without the leading /")
    check.set_defaults(handler=run_whitelist_check)


def run_init(args: argparse.Namespace) -> int:
    console = make_console()
    if args.directory is not None and args.config is not None and args.directory != args.config:
        print_error(f"two folders given ({args.directory} and --config {args.config}); give one")
        return EXIT_USAGE
    directory: Path = args.directory or args.config or DEFAULT_CONFIG_DIR
    try:
        created = init_config_dir(directory)
    except ConfigError as exc:
        print_error(str(exc))
        return EXIT_USAGE
    for path in created:
        console.print(f"created {escape(str(path))}")
    if not created:
        console.print(f"nothing to do: {escape(str(directory))} is complete")
    return EXIT_OK


def run_validate(args: argparse.Namespace) -> int:
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
    verdict = folder_verdict(args.config)  # the very verdict serve and reload act on
    plane = verdict.plane
    problems = list(verdict.problems)
    console.print(problem_table(args.config, problems))
    errors = sum(1 for problem in problems if not problem.warning)
    warnings = len(problems) - errors
    summary = f"{errors} error(s), {warnings} warning(s)"
    console.print(("[green]valid[/green]: " if not errors else "[red]invalid[/red]: ") + summary)
    if plane is not None:
        console.print(budget_table(plane.config.budgets))
        for line in env_name_lines(plane.env_secret_names, plane.env_plain_names):
            console.print(escape(line))
    running = None if plane is None else running_differences(args.config / DATA_DIR_NAME, plane)
    if running is not None and running[1]:
        console.print(f"[yellow]note[/yellow]: a bridge runs on this folder (pid {running[0]})")
        for line in running[1]:
            console.print(f"  {escape(line)}")
    return EXIT_OK if verdict.valid else EXIT_PROBLEMS


def env_name_lines(secret: Sequence[str], plain: Sequence[str]) -> list[str]:
    """Which ``.env`` names the bridge takes for secrets: their values are redacted wherever
    they appear (model input, logs, audit); the others' values are not."""
    if not secret and not plain:
        return []
    lines = [f".env secrets (values redacted everywhere): {', '.join(secret) or 'none'}"]
    if plain:
        lines.append(
            f".env names not taken for secrets: {', '.join(plain)} (a credential's name should"
            " end in _PASSWORD, _PASS, _PW, _PWD, _TOKEN, _SECRET or _API_KEY, or be referenced"
            " as ${NAME} in a YAML file)"
        )
    return lines


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
    refused = refuse_folder(args.config)
    if refused is not None:
        return refused
    console = make_console()
    try:
        whitelist = _load_whitelist(args.config)
    except ConfigLoadError as exc:
        console.print(f"[red]{WHITELIST_FILE} has problems:[/red]")
        for problem in exc.problems:
            console.print(f"  {escape(str(problem))}")
        return EXIT_PROBLEMS
    # Exactly the calls run_command makes, in its order, on the command as the model sent it:
    # canonicalising first and deciding on the result would canonicalise twice and allow
    # `//weather clear`, which the bridge refuses.
    try:
        if args.executor == "other":
            canonical = canonicalize(args.command)
        else:
            decision = whitelist.decide(args.executor, args.command)
            canonical = decision.canonical
    except InvalidCommand as exc:
        console.print(f"[red]deny[/red]: the command {escape(exc.reason)}")
        return EXIT_USAGE
    judgement = whitelist.never.judge(canonical, None)
    if args.executor == "other":
        # No rule applies: another player's confirmation, which never passes the never list.
        refusal = judgement.refusal()
        verdict = "[red]deny[/red]" if refusal else "[green]ask the player[/green]"
        console.print(f"{verdict} for another player (they must confirm it)")
        console.print(f"canonical: {escape(canonical)}")
        print_judgement(console, judgement, allow_never=False)
        return EXIT_OK if refusal is None else EXIT_PROBLEMS
    confirm_rule = whitelist.confirm_rule(canonical) if args.executor == "console" else None
    if confirm_rule is not None:  # the two-person rule comes before the console rules
        allow_never = whitelist.confirm_opts_out(confirm_rule)
        refusal = judgement.refusal(allow_never=allow_never)
        verdict = "[red]deny[/red]" if refusal else "[green]ask a second player[/green]"
        console.print(f"{verdict} as console (a second player must confirm it)")
        console.print(f"canonical: {escape(canonical)}")
        opted = " (allow_never: true)" if allow_never else ""
        console.print(f"console_confirm rule: {escape(confirm_rule)}{opted}")
        print_judgement(console, judgement, allow_never=allow_never)
        return EXIT_OK if refusal is None else EXIT_PROBLEMS
    refusal = judgement.refusal(allow_never=decision.allow_never)
    allowed = decision.allowed and refusal is None
    verdict = "[green]allow[/green]" if allowed else "[red]deny[/red]"
    console.print(f"{verdict} as {args.executor}")
    console.print(f"canonical: {escape(decision.canonical)}")
    if decision.rule is not None:
        opted = " (allow_never: true)" if decision.allow_never else ""
        console.print(f"rule: {escape(decision.rule)}{opted}")
    elif not whitelist.enabled:
        console.print("rule: none (the whitelist is disabled)")
    else:
        console.print(f"rule: none of the {len(whitelist.rules(args.executor))} rules matched")
    print_judgement(console, judgement, allow_never=decision.allow_never)
    return EXIT_OK if allowed else EXIT_PROBLEMS


def _load_whitelist(directory: Path) -> Whitelist:
    # Only whitelist.yml is read, so a rule can be tested while other files are mid-edit.
    data = read_regular_file(
        directory / WHITELIST_FILE, label=WHITELIST_FILE, max_bytes=MAX_YAML_BYTES[WHITELIST_FILE]
    )
    if data is None:  # as the bridge does: the built-in default stands in for a missing file
        data = default_bytes(WHITELIST_FILE)
    document = load_strict_yaml(data, WHITELIST_FILE)
    model, problems = validate_document(WhitelistFile, document, WHITELIST_FILE)
    if model is None:
        raise ConfigLoadError(problems)
    errors = [
        problem
        for problem in located_problems(model, document, WHITELIST_FILE)
        if not problem.warning
    ]
    if errors:
        raise ConfigLoadError(errors)
    return compile_whitelist(model)
