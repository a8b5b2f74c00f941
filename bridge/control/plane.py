"""The control plane: every file validated jointly and published as one immutable snapshot.

``load_control_plane`` reads the folder, collects every problem of every file (and the rules
that span files) and either returns a complete ``ControlPlane`` or raises ``ConfigLoadError``
with all of them. ``ControlPlaneStore`` holds the snapshot in use: a reload builds a whole new
snapshot first and swaps one reference, so a reader that took ``store.current`` sees either the
old plane or the new one, never a mix, and a failed reload leaves the old one serving.

A consistent folder: every file read is checked again once the whole folder is read (size,
mtime_ns, inode, or still absent); when one changed meanwhile the folder is read again, up to
``READ_ATTEMPTS`` times, and a folder that keeps changing is refused with a problem saying so.
A reload also waits for files written moments before it (``settle_s``): a save that rewrites a
file in place can pause half-written, and such a file looks unchanged to a second look.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bridge.control.config_file import ConfigFile
from bridge.control.env_references import env_reference_warnings
from bridge.control.envfile import ENV_FILE, env_file_exposure, read_env_file
from bridge.control.files import identity_of, read_regular_file, recording_reads
from bridge.control.functions_file import FunctionsFile, catalogue_problems
from bridge.control.layout import (
    CONFIG_FILE,
    FUNCTIONS_FILE,
    MAX_YAML_BYTES,
    MESSAGES_FILE,
    PROVIDERS_FILE,
    TOOLS_FILE,
    WHITELIST_FILE,
    default_bytes,
)
from bridge.control.mcp_checks import mcp_problems
from bridge.control.memory_config import MAX_MEMORY_CHARS
from bridge.control.memory_files import MemoryNote, load_memory_notes
from bridge.control.message_locales import localised
from bridge.control.messages_file import MessagesFile
from bridge.control.never_rules import located_problems
from bridge.control.problems import ConfigLoadError, Problem, format_path
from bridge.control.providers import ProvidersFile
from bridge.control.secrets import (
    EMBEDDED_REFERENCE,
    REQUEST_TEMPLATES,
    merged_environment,
    similar_variable,
    unset_reference,
)
from bridge.control.server_policies import ServerPolicy, load_policy
from bridge.control.servers_file import NO_SERVERS, SERVERS_FILE, ServersFile
from bridge.control.souls_files import Soul, load_souls
from bridge.control.tools_file import ToolsFile
from bridge.control.validation import validate_document
from bridge.control.whitelist_file import WhitelistFile
from bridge.control.workspace_files import Skill, load_workspace
from bridge.control.yaml_strict import YamlDocument, load_strict_yaml
from bridge.redaction import Redactor, is_secret_name

ModelT = TypeVar("ModelT", bound=BaseModel)

# Values this short are not treated as secrets: redacting "1" or "on" would mangle text.
_MIN_SECRET_CHARS = 4
# How often the folder is read before a folder that keeps changing is refused.
READ_ATTEMPTS = 5
# A reload treats a file modified this recently as possibly still being written.
RELOAD_SETTLE_S = 0.1
MAX_SERVERS_BYTES = 256 * 1024
# The pause between two reads of a folder that changed while it was read (initial load).
_RETRY_PAUSE_S = 0.01


@dataclass(frozen=True, slots=True)
class ControlPlane:
    """One validated, immutable snapshot of the whole configuration folder."""

    version: int
    directory: Path
    config: ConfigFile
    providers: ProvidersFile
    whitelist_file: WhitelistFile
    tools: ToolsFile
    functions: FunctionsFile
    messages: MessagesFile
    agents_md: str
    skills: tuple[Skill, ...]
    warnings: tuple[Problem, ...] = ()
    secret_values: frozenset[str] = field(default=frozenset(), repr=False)
    redactor: Redactor = field(default_factory=Redactor, repr=False, compare=False)
    """The built-in rules, ``config.yml``'s ``redaction.rules`` and every secret value."""
    env_secret_names: Sequence[str] = ()
    """The ``.env`` names whose values are redacted wherever they appear (``validate`` lists
    them): a credential-like name, or one a YAML file references."""
    env_plain_names: Sequence[str] = ()
    """The other ``.env`` names: their values are not taken for secrets."""
    servers: ServersFile = NO_SERVERS
    """``servers.yml``: the named servers of a network (none without the file)."""
    server_policies: Mapping[str, ServerPolicy] = field(default_factory=dict)
    """The servers with policy files of their own, by id (``bridge.control.server_policies``)."""
    memory_notes: tuple[MemoryNote, ...] = ()
    souls: Mapping[str, Soul] = field(default_factory=dict)
    """``workspace/souls/``: the personas by name (`bridge.control.souls_files`)."""
    """The server memories of ``workspace/memory/*.md`` (``bridge.control.memory_files``)."""

    def redact(self, text: str) -> str:
        """``text`` with every secret the redactor knows replaced by a placeholder."""
        return self.redactor.redact_text(text)


def load_control_plane(
    path: Path,
    *,
    environ: Mapping[str, str] | None = None,
    version: int = 1,
    settle_s: float = 0.0,
) -> ControlPlane:
    """Load and validate the folder ``path``; ``ConfigLoadError`` lists every problem.

    ``environ`` stands in for the process environment (``os.environ`` when ``None``). A missing
    YAML file falls back to its built-in default with a warning; ``init_config_dir`` writes them.
    ``settle_s``: read again while a file was modified less than this long before the read
    (reloads pass ``RELOAD_SETTLE_S``). Blocking: it may pause between reads.
    """
    path = Path(path)
    if not path.is_dir():
        missing = Problem(str(path), None, None, "", "configuration folder not found")
        raise ConfigLoadError([missing])
    process_environ = os.environ if environ is None else environ
    unsettled: list[Path] = []
    for _ in range(READ_ATTEMPTS):
        started_ns = time.time_ns()
        with recording_reads() as reads:
            try:
                result: ControlPlane | ConfigLoadError = _Loader(path, process_environ).load(
                    version
                )
            except ConfigLoadError as exc:
                result = exc  # a half-written file gives problems nobody wrote either
        unsettled = [file for file, seen in reads.items() if identity_of(file) != seen]
        if settle_s > 0:
            # Modified just before or during the read; a time far ahead is a skewed clock's,
            # not a writer's, and must not refuse every reload.
            recent, ahead = started_ns - int(settle_s * 1e9), time.time_ns() + 1_000_000_000
            unsettled += [
                file
                for file, seen in reads.items()
                if seen is not None and recent < seen[1] < ahead
            ]
        if not unsettled:
            if isinstance(result, ConfigLoadError):
                raise result
            return result
        time.sleep(max(settle_s, _RETRY_PAUSE_S))
    names = sorted({_relative(path, file) for file in unsettled})
    message = (
        f"kept changing while the folder was read ({READ_ATTEMPTS} attempts); nothing was "
        "loaded. Save files by writing a temporary file and renaming it over the old one, "
        "then try again"
    )
    raise ConfigLoadError([Problem(name, None, None, "", message) for name in names])


def _relative(directory: Path, file: Path) -> str:
    try:
        return str(file.relative_to(directory))
    except ValueError:
        return str(file)


class _Loader:
    def __init__(self, directory: Path, process_environ: Mapping[str, str]) -> None:
        self.directory = directory
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.dotenv: dict[str, str] = {}
        self.documents: dict[str, YamlDocument] = {}
        try:
            self.dotenv = read_env_file(directory)
        except ConfigLoadError as exc:
            self.problems.extend(exc.problems)
        exposure = env_file_exposure(directory)
        if exposure is not None:
            self.warnings.append(Problem(ENV_FILE, None, None, "", exposure, warning=True))
        self.environ = merged_environment(process_environ, self.dotenv)

    def load(self, version: int) -> ControlPlane:
        # The environment resolves storage.password (a ${NAME} reference).
        config = self.model(CONFIG_FILE, ConfigFile, context={"environ": self.environ})
        if config is not None:
            for problem in mcp_problems(
                config.mcp,
                self.documents.get(CONFIG_FILE),
                CONFIG_FILE,
                self.directory,
                self.environ,
            ):
                (self.warnings if problem.warning else self.problems).append(problem)
        context = {"environ": self.environ, "defer_cross_checks": True}
        providers = self.model(PROVIDERS_FILE, ProvidersFile, context=context)
        whitelist_file = self.model(WHITELIST_FILE, WhitelistFile)
        if whitelist_file is not None:
            self.never_rules(whitelist_file, WHITELIST_FILE)
        tools = self.tools_file()
        functions = self.model(FUNCTIONS_FILE, FunctionsFile)
        if functions is not None:
            self.function_opt_outs(functions, FUNCTIONS_FILE)
        messages = self.model(MESSAGES_FILE, MessagesFile)
        servers = self.servers_file(context)
        policies = self.server_policies(servers, config)
        agents_md, skills, workspace_problems = load_workspace(self.directory)
        self.problems.extend(workspace_problems)
        max_chars = config.memory.max_chars if config is not None else MAX_MEMORY_CHARS
        memory_notes, memory_problems = load_memory_notes(self.directory, max_chars)
        self.problems.extend(memory_problems)
        souls, soul_problems = load_souls(self.directory)
        self.problems.extend(soul_problems)
        if config is not None:
            self.named_souls(config, souls)
        if providers is not None:
            self.check_providers(providers)
        if PROVIDERS_FILE in self.documents:
            self.warnings.extend(
                env_reference_warnings(self.documents[PROVIDERS_FILE], PROVIDERS_FILE)
            )
        if messages is not None and config is not None:
            messages = self.localised(messages, config.locale)
        if functions is not None and config is not None:
            for message in catalogue_problems(functions, config.functions):
                self.problems.append(Problem(FUNCTIONS_FILE, None, None, "functions", message))
        if (
            self.problems
            or config is None
            or providers is None
            or whitelist_file is None
            or tools is None
            or functions is None
            or messages is None
            or servers is None
            or policies is None
        ):
            raise ConfigLoadError([*self.problems, *self.warnings])
        return ControlPlane(
            version=version,
            directory=self.directory,
            config=config,
            providers=providers,
            whitelist_file=whitelist_file,
            tools=tools,
            functions=functions,
            messages=messages,
            agents_md=agents_md,
            skills=skills,
            warnings=tuple(self.warnings),
            secret_values=(secrets := self.secrets(providers)),
            redactor=Redactor(config.redaction.rules, secret_values=secrets),
            env_secret_names=(env_names := self.secret_env_names())[0],
            env_plain_names=env_names[1],
            servers=servers,
            server_policies=policies,
            memory_notes=memory_notes,
            souls=souls,
        )

    def named_souls(self, config: ConfigFile, souls: Mapping[str, Soul]) -> None:
        """Each soul ``persona`` names must be one of ``workspace/souls/``."""
        for lane in ("public", "private"):
            name = getattr(config.persona, lane)
            if name is not None and name not in souls:
                line, column = self.documents[CONFIG_FILE].locate(("persona", lane))
                known = ", ".join(sorted(souls)) or "none"
                message = f"no soul named {name!r} in workspace/souls (souls: {known})"
                self.problems.append(Problem(CONFIG_FILE, line, column, f"persona.{lane}", message))

    def server_policies(
        self, servers: ServersFile | None, config: ConfigFile | None
    ) -> dict[str, ServerPolicy] | None:
        policies: dict[str, ServerPolicy] = {}
        failed = False
        for server_id, entry in [] if servers is None else servers.servers.items():
            policy = load_policy(
                server_id,
                entry,
                validate=self.policy_file,
                function_limits=None if config is None else config.functions,
                problems=self.problems,
            )
            if policy is not None and policy.messages is not None and config is not None:
                # A server's own lines sit over the locale's set like message.yml does.
                own = self.localised(policy.messages, config.locale)
                policy = None if own is None else dataclasses.replace(policy, messages=own)
            if policy is None:
                failed = True
            elif not policy.empty:
                policies[server_id] = policy
        return None if failed else policies

    def policy_file(self, path: str, model: type[BaseModel]) -> BaseModel | None:
        """One server's policy file, validated like its network-wide counterpart; problems
        name the file by its path in the folder."""
        limit = MAX_YAML_BYTES[FUNCTIONS_FILE if model is FunctionsFile else CONFIG_FILE]
        try:
            data = read_regular_file(self.directory / path, label=path, max_bytes=limit)
            if data is None:
                self.problems.append(
                    Problem(path, None, None, "", "not found (named in servers.yml)")
                )
                return None
            document = load_strict_yaml(data, path, max_bytes=limit)
        except ConfigLoadError as exc:
            self.problems.extend(exc.problems)
            return None
        self.documents[path] = document  # its ${NAME} values are secrets too
        result, problems = validate_document(model, document, path)
        self.problems.extend(problems)
        if isinstance(result, WhitelistFile):  # a server's own rules meet the never list too
            self.never_rules(result, path)
        return result

    def function_opt_outs(self, functions: FunctionsFile, name: str) -> None:
        """A warning, every time, for each Function that may dispatch never-listed commands."""
        document = self.documents.get(name)
        for index, spec in enumerate(functions.functions):
            if not spec.allow_never:
                continue
            parts = ("functions", index, "allow_never")
            line, column = document.locate(parts) if document is not None else (None, None)
            message = (
                f"function {spec.name} has allow_never: true, so its command.dispatch may run"
                " never-listed commands"
            )
            self.warnings.append(
                Problem(name, line, column, format_path(parts), message, warning=True)
            )

    def never_rules(self, whitelist: WhitelistFile, name: str) -> None:
        """Rules that could reach a never-listed command: errors, or warnings when opted out."""
        for problem in located_problems(whitelist, self.documents.get(name), name):
            (self.warnings if problem.warning else self.problems).append(problem)

    def servers_file(self, context: Mapping[str, Any]) -> ServersFile | None:
        """``servers.yml`` when the folder has one; without it, no named servers (no warning:
        one server per bridge is a complete setup)."""
        try:
            data = read_regular_file(
                self.directory / SERVERS_FILE, label=SERVERS_FILE, max_bytes=MAX_SERVERS_BYTES
            )
            if data is None:
                return NO_SERVERS
            document = load_strict_yaml(data, SERVERS_FILE, max_bytes=MAX_SERVERS_BYTES)
        except ConfigLoadError as exc:
            self.problems.extend(exc.problems)
            return None
        self.documents[SERVERS_FILE] = document
        result, problems = validate_document(ServersFile, document, SERVERS_FILE, context=context)
        self.problems.extend(problems)
        for server_id, earlier in [] if result is None else result.shared_tokens():
            parts = ("servers", server_id, "token")
            line, column = document.locate(parts)
            message = f"the same token as server '{earlier}'; each server needs its own"
            self.problems.append(Problem(SERVERS_FILE, line, column, format_path(parts), message))
        return result

    def model(
        self, name: str, model: type[ModelT], *, context: Mapping[str, Any] | None = None
    ) -> ModelT | None:
        document = self.document(name)
        if document is None:
            return None
        result, problems = validate_document(model, document, name, context=context)
        self.problems.extend(problems)
        return result

    def localised(self, messages: MessagesFile, locale: str) -> MessagesFile | None:
        """``message.yml`` over the ``locale`` set of ``config.yml``."""
        try:
            return localised(messages, locale)
        except ValueError as exc:
            message = f"with locale {locale}: {exc}"
            self.problems.append(Problem(MESSAGES_FILE, None, None, "", message))
            return None

    def document(self, name: str) -> YamlDocument | None:
        try:
            data = read_regular_file(
                self.directory / name, label=name, max_bytes=MAX_YAML_BYTES[name]
            )
            if data is None:
                message = "not found; using the built-in default (mineclaw-bridge init writes it)"
                self.warnings.append(Problem(name, None, None, "", message, warning=True))
                data = default_bytes(name)
            document = load_strict_yaml(data, name, max_bytes=MAX_YAML_BYTES[name])
        except ConfigLoadError as exc:
            self.problems.extend(exc.problems)
            return None
        self.documents[name] = document
        return document

    def tools_file(self) -> ToolsFile | None:
        """``tools.yml`` with each invalid tool set aside (a located warning), not the whole
        control plane refused: one bad entry must not take every tool, or the bridge, down.
        Problems outside the entries (schema, the file's shape, a bad tool name) still fail."""
        document = self.document(TOOLS_FILE)
        if document is None:
            return None
        result, problems = validate_document(ToolsFile, document, TOOLS_FILE)
        if result is not None:
            return result
        raw = document.value.get("tools") if isinstance(document.value, dict) else None
        bad = {_tool_entry(problem) for problem in problems}
        if not isinstance(raw, dict) or None in bad or not isinstance(document.value, dict):
            self.problems.extend(problems)
            return None
        kept = {name: entry for name, entry in raw.items() if name not in bad}
        try:
            trimmed = ToolsFile.model_validate({**document.value, "tools": kept}, strict=True)
        except ValidationError:
            self.problems.extend(problems)
            return None
        for problem in problems:
            message = f"{problem.message} (tool '{_tool_entry(problem)}' is set aside)"
            self.warnings.append(dataclasses.replace(problem, message=message, warning=True))
        return trimmed

    def check_providers(self, providers: ProvidersFile) -> None:
        document = self.documents[PROVIDERS_FILE]
        for parts, message in providers.cross_check():
            line, column = document.locate(parts)
            self.problems.append(Problem(PROVIDERS_FILE, line, column, format_path(parts), message))
        in_use = providers.providers_in_use()
        for provider_id, provider in providers.providers.items():
            name = provider.api_key_env
            if not provider.api_key_missing or name is None:
                continue
            parts = ("providers", provider_id, "api_key")
            line, column = document.locate(parts)
            similar = similar_variable(name, self.environ)
            used = provider_id in in_use
            if similar is not None and used:
                # A misspelt name, not a key still to be set: every turn would fail.
                message = (
                    f"{unset_reference(name, self.environ)} The default model "
                    f"{providers.default!r} uses this provider; write ${{{similar}}} here or "
                    f"set {name} in .env"
                )
                self.problems.append(
                    Problem(PROVIDERS_FILE, line, column, format_path(parts), message)
                )
                continue
            # No key at all yet (a fresh folder), or a provider no model in use calls: the
            # bridge starts, and says what fails until it is set.
            message = (
                f"{unset_reference(name, self.environ)}; turns using this provider will fail "
                "until it is"
            )
            if not used:
                message += " (no model in use calls this provider now)"
            self.warnings.append(
                Problem(PROVIDERS_FILE, line, column, format_path(parts), message, True)
            )

    def secret_env_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The ``.env`` names whose values are redacted (the name looks like a credential, or
        a YAML file references it) and the others, each sorted: what ``validate`` lists."""
        referenced: set[str] = set()
        for document in self.documents.values():
            referenced |= _references(document.value)
        secret = sorted(n for n in self.dotenv if is_secret_name(n) or n in referenced)
        return tuple(secret), tuple(sorted(set(self.dotenv) - set(secret)))

    def secrets(self, providers: ProvidersFile) -> frozenset[str]:
        """Every resolved value that is or may hold a credential: ``.env`` values whose name
        looks secret, each ``${NAME}`` resolved anywhere in the YAML files (alone, so the bare
        token of ``Bearer ${TOKEN}`` is known too), provider keys and whole header values."""
        values = {v for name, v in self.dotenv.items() if is_secret_name(name)}
        for document in self.documents.values():
            for name in _references(document.value):
                resolved = self.environ.get(name)
                if resolved and name not in REQUEST_TEMPLATES:
                    values.add(resolved)
        for provider in providers.providers.values():
            values.add(provider.api_key.get_secret_value())
            values.update(provider.extra_headers.values())
        return frozenset(v for v in values if len(v) >= _MIN_SECRET_CHARS)


def _references(value: object) -> set[str]:
    """The names of every ``${NAME}`` inside the strings of a parsed YAML value."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "${" in item:
                found.update(EMBEDDED_REFERENCE.findall(item))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class ControlPlaneStore:
    """The control plane in use. ``reload()`` is safe to call from any thread."""

    def __init__(self, path: Path, *, environ: Mapping[str, str] | None = None) -> None:
        self.path = Path(path)
        self._environ = environ
        self._lock = threading.Lock()
        self._current = load_control_plane(self.path, environ=environ, version=1)

    @property
    def current(self) -> ControlPlane:
        """The published snapshot; take it once per unit of work (a turn) and keep it."""
        return self._current

    def reload(self, check: Callable[[ControlPlane], None] | None = None) -> ControlPlane:
        """Load the folder again and publish it; on ``ConfigLoadError`` nothing changes.

        ``check`` may refuse the loaded plane by raising (``ConfigError``); it sees the very
        plane that is published, not a second read of the folder. Blocking (it reads files,
        and waits for files written moments before): call it from a worker thread."""
        with self._lock:
            plane = load_control_plane(
                self.path,
                environ=self._environ,
                version=self._current.version + 1,
                settle_s=RELOAD_SETTLE_S,
            )
            if check is not None:
                check(plane)
            self._current = plane  # one reference swap: readers see old or new, whole
            return plane


def _tool_entry(problem: Problem) -> str | None:
    """The tool a ``tools.yml`` problem belongs to (``tools.<name>.…``), else ``None``."""
    parts = problem.path.split(".")
    if len(parts) >= 2 and parts[0] == "tools":
        return parts[1].split("[")[0]
    return None
