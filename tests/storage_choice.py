"""Which storage backend the app and end-to-end suites run on, chosen once for the run.

``pytest --storage=postgresql`` (``make test`` runs it as a second pass) gives every config
folder a test makes, through `open_app` or `BridgeProcess.start`, a ``storage:`` section naming
a fresh database on the session's PostgreSQL server, the password in the folder's ``.env``, as
an owner configures it. A folder that already names its storage keeps it (the PostgreSQL-only
tests, a restart of the same folder). Tests about SQLite files carry ``@pytest.mark.sqlite_only``
and always run on SQLite; the PostgreSQL pass deselects them, the SQLite pass runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bridge.app.serving.storage_settings import storage_target
from bridge.control import init_config_dir, load_control_plane
from bridge.store.archive import ArchivedTurn
from tests.postgres_server import PostgresServer

PASSWORD_VARIABLE = "MINECLAW_TEST_DB_PASSWORD"
SQLITE_ONLY = "sqlite_only"


@dataclass
class PostgresStorage:
    """The current test's databases; `drop` removes them when the test ends."""

    server: PostgresServer
    databases: list[str] = field(default_factory=list)

    def apply(self, config_dir: Path) -> None:
        config_yml = config_dir / "config.yml"
        if not config_yml.exists():
            init_config_dir(config_dir)
        text = config_yml.read_text(encoding="utf-8")
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError:
            return  # the test is about a broken file; leave it as the test wrote it
        if loaded is not None and not isinstance(loaded, dict):
            return
        if loaded is not None and "storage" in loaded:
            return
        name = self.server.create_database()
        self.databases.append(name)
        section = (
            "storage:\n  backend: postgresql\n"
            f"  dsn: {self.server.dsn(name)}\n  password: ${{{PASSWORD_VARIABLE}}}\n"
        )
        config_yml.write_text(text + ("" if text.endswith("\n") or not text else "\n") + section)
        env = config_dir / ".env"
        lines = env.read_text(encoding="utf-8") if env.exists() else ""
        if f"{PASSWORD_VARIABLE}=" not in lines:
            sep = "" if lines.endswith("\n") or not lines else "\n"
            env.write_text(f"{lines}{sep}{PASSWORD_VARIABLE}={self.server.password}\n")
        env.chmod(0o600)

    def drop(self) -> None:
        for name in self.databases:
            self.server.drop_database(name)
        self.databases.clear()


_current: PostgresStorage | None = None


def set_current(storage: PostgresStorage | None) -> None:
    global _current
    _current = storage


def apply_chosen_storage(config_dir: Path) -> None:
    """Give ``config_dir`` the run's storage backend (nothing to do for SQLite)."""
    if _current is not None:
        _current.apply(config_dir)


def kept_storage(config_dir: Path) -> str:
    """The ``storage:`` section of ``config_dir/config.yml`` as YAML text ("" when it has
    none), for a test that rewrites the file and reloads: storage is read only at start, so
    dropping the section would be reported as a change waiting for a restart."""
    loaded = yaml.safe_load((config_dir / "config.yml").read_text(encoding="utf-8"))
    if not isinstance(loaded, dict) or "storage" not in loaded:
        return ""
    return yaml.safe_dump({"storage": loaded["storage"]}, sort_keys=False)


def archived_turns(config_dir: Path) -> list[ArchivedTurn]:
    """Every turn in the archive of the storage ``config_dir`` names, oldest first, read as a
    second bridge would (the folder's own ``config.yml`` and ``.env``)."""
    plane = load_control_plane(config_dir, environ={})
    archive = storage_target(plane, config_dir).open_archive()
    try:
        return archive.all_turns()
    finally:
        archive.close()
