"""A real PostgreSQL server for the tests and the store bench, started in a temporary folder.

The server listens on 127.0.0.1 at a free port and on a unix socket inside its folder. Two
roles: the superuser (``ADMIN``, trusted over the socket only) for setting databases up, and the
bridge's role (``BRIDGE_ROLE``), which must give its password over TCP, as a real deployment
does, so the DSN and ``.env`` password path is the one tested.

``initdb`` refuses to run as root. As root (CI, this machine) the server's folder is handed to
the unprivileged ``nobody`` and every server process runs as that user; a developer who is
not root runs it as themselves.

The binaries are found on ``PATH`` or under ``/usr/lib/postgresql/<version>/bin`` (Debian's
layout, which does not put them on ``PATH``). ``make install`` installs the distribution's
``postgresql`` package where neither has them.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

ADMIN = "mineclaw_admin"
BRIDGE_ROLE = "mineclaw_bridge"
UNPRIVILEGED_USER = "nobody"
_STEP_TIMEOUT_S = 120
INSTALL_HINT = (
    "run `make install` (it installs the distribution's postgresql package where initdb is missing)"
)


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server could be started; the message says why and what to do."""


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres`` (the newest version)."""
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        if (folder / "initdb").exists() and (folder / "postgres").exists():
            return folder
    candidates = [
        folder
        for folder in Path("/usr/lib/postgresql").glob("*/bin")
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists()
    ]

    def version(folder: Path) -> int:
        digits = re.match(r"\d+", folder.parent.name)
        return int(digits.group(0)) if digits else 0

    return max(candidates, key=version) if candidates else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class PostgresServer:
    """A running server; `stop` it at the end (the folder is removed with it)."""

    bin_dir: Path
    base: Path
    port: int
    password: str = field(repr=False)
    run_as: tuple[int, int] | None = None
    """(uid, gid) the server's processes run as; None: this process's user."""
    durable: bool = False
    """fsync on (the bench: commits as a deployment pays for them) or off (the tests)."""
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data_dir(self) -> Path:
        return self.base / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base / "socket"

    @property
    def log_file(self) -> Path:
        return self.base / "server.log"

    def admin_dsn(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={self.port} user={ADMIN} dbname={dbname}"

    def dsn(self, dbname: str) -> str:
        """The bridge role's DSN over TCP loopback; its password is `password`, given apart."""
        return f"postgresql://{BRIDGE_ROLE}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, dbname: str = "postgres") -> psycopg.Connection[Any]:
        return psycopg.connect(self.admin_dsn(dbname), autocommit=True)

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database owned by the bridge role."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}" OWNER {BRIDGE_ROLE}')
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def terminate_connections(self, dbname: str) -> int:
        """End every client connection to ``dbname`` (a lost connection, as the bridge sees
        it); how many were ended."""
        with self.admin() as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (dbname,),
            ).fetchall()
        return len(rows)

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        extra: dict[str, Any] = {}
        if self.run_as is not None:
            extra = {"user": self.run_as[0], "group": self.run_as[1], "extra_groups": []}
        result = subprocess.run(
            command,
            cwd=self.base,
            capture_output=True,
            text=True,
            timeout=_STEP_TIMEOUT_S,
            check=False,
            **extra,
        )
        if result.returncode != 0:
            log = ""
            with contextlib.suppress(OSError):
                log = self.log_file.read_text(errors="replace")[-2000:]
            raise PostgresUnavailable(
                f"{' '.join(command)} failed ({result.returncode}): "
                f"{(result.stderr or result.stdout).strip()[-2000:]}\n{log}"
            )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1"
            f" -c fsync={'on' if self.durable else 'off'} -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_file), "-w",
                  "-t", str(_STEP_TIMEOUT_S), "-o", options, "start")  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(PostgresUnavailable, subprocess.TimeoutExpired):
            self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


def start_postgres(*, durable: bool = False) -> PostgresServer:
    """Create a cluster in a new temporary folder and start it. Raises `PostgresUnavailable`."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise PostgresUnavailable(
            "PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql/*/bin): "
            + INSTALL_HINT
        )
    run_as: tuple[int, int] | None = None
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam(UNPRIVILEGED_USER)
        except KeyError as exc:
            raise PostgresUnavailable(
                f"running as root and there is no user {UNPRIVILEGED_USER!r} to run PostgreSQL "
                "as (initdb refuses root)"
            ) from exc
        run_as = (entry.pw_uid, entry.pw_gid)
    base = Path(tempfile.mkdtemp(prefix="mineclaw-pg-"))
    server = PostgresServer(
        bin_dir=bin_dir,
        base=base,
        port=_free_port(),
        password=secrets.token_urlsafe(18),
        run_as=run_as,
        durable=durable,
    )
    try:
        server.socket_dir.mkdir()
        password_file = base / "admin.pw"
        password_file.write_text(secrets.token_urlsafe(18) + "\n")
        if run_as is not None:
            for path in (base, server.socket_dir, password_file):
                os.chown(path, *run_as)
        server._run("initdb", "-D", str(server.data_dir), "-U", ADMIN, "-E", "UTF8",
                    "--locale=C", "--no-sync", "--auth-local=trust",
                    "--auth-host=scram-sha-256", f"--pwfile={password_file}")  # fmt: skip
        password_file.unlink()
        server.start()
        with server.admin() as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN CREATEDB PASSWORD {}").format(
                    sql.Identifier(BRIDGE_ROLE), sql.Literal(server.password)
                )
            )
    except (PostgresUnavailable, OSError, psycopg.Error, subprocess.TimeoutExpired) as exc:
        server.remove()
        if isinstance(exc, PostgresUnavailable):
            raise
        raise PostgresUnavailable(f"PostgreSQL did not start: {exc}") from exc
    return server
