"""``storage`` in config.yml: each mistake is reported with file, line and field, and the
password never leaves ``.env`` (nor any message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane

PASSWORD = "pw-Kq93mZr7Tx"


def write_config(config_dir: Path, storage: str, env: str = "") -> None:
    (config_dir / "config.yml").write_text(f"schema: 1\nstorage:\n{storage}", encoding="utf-8")
    (config_dir / ".env").write_text(env, encoding="utf-8")
    (config_dir / ".env").chmod(0o600)


def refusal(config_dir: Path) -> str:
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir, environ={})
    return str(caught.value)


def test_default_is_sqlite_without_a_dsn(config_dir: Path) -> None:
    storage = load_control_plane(config_dir, environ={}).config.storage
    assert (storage.backend, storage.dsn, storage.password_value) == ("sqlite", None, None)


def test_postgresql_with_a_dsn_and_the_password_from_dotenv(config_dir: Path) -> None:
    write_config(
        config_dir,
        "  backend: postgresql\n  dsn: postgresql://mineclaw@db.example:5432/mc\n"
        "  password: ${MINECLAW_DB_PASSWORD}\n",
        f"MINECLAW_DB_PASSWORD={PASSWORD}\n",
    )
    plane = load_control_plane(config_dir, environ={})
    storage = plane.config.storage
    assert storage.dsn == "postgresql://mineclaw@db.example:5432/mc"
    assert storage.password_value == PASSWORD
    assert PASSWORD not in repr(plane.config) and PASSWORD not in str(storage)
    # The resolved password is a secret the redactor hides from every line that leaves.
    assert PASSWORD not in plane.redact(f"failed with {PASSWORD}")


@pytest.mark.parametrize(
    ("storage", "line", "field", "message"),
    [
        ("  backend: postgresql\n", 2, "storage.dsn", "backend postgresql needs a dsn"),
        ("  backend: mysql\n", 3, "storage.backend", "sqlite"),
        ("  dsn: postgresql://h/db\n", 3, "storage.dsn", "only read with backend: postgresql"),
        (
            "  backend: postgresql\n  dsn: postgresql://u:hunter2@h/db\n",
            4,
            "storage.dsn",
            "must not hold the password",
        ),
        (
            "  backend: postgresql\n  dsn: 'host=h password=hunter2'\n",
            4,
            "storage.dsn",
            "must not hold the password",
        ),
        ("  backend: postgresql\n  dsn: just-a-name\n", 4, "storage.dsn", "postgresql:// URL"),
        (
            "  backend: postgresql\n  dsn: 'host=h port'\n",
            4,
            "storage.dsn",
            "not a PostgreSQL connection string",
        ),
        (
            "  backend: postgresql\n  dsn: postgresql://u@h/db\n  password: hunter2\n",
            5,
            "storage.password",
            "must be an environment reference",
        ),
        (
            "  backend: postgresql\n  dsn: postgresql://u@h/db\n  password: ${NOT_SET_ANYWHERE}\n",
            5,
            "storage.password",
            "${NOT_SET_ANYWHERE} is not set in the environment or .env",
        ),
        ("  backend: sqlite\n  port: 5432\n", 4, "storage.port", ""),
    ],
)
def test_mistakes_name_file_line_and_field(
    config_dir: Path, storage: str, line: int, field: str, message: str
) -> None:
    write_config(config_dir, storage)
    text = refusal(config_dir)
    assert f"config.yml:{line}" in text and field in text and message in text, text
    assert "hunter2" not in text


def test_lease_and_deadline_settings_are_read(config_dir: Path) -> None:
    write_config(
        config_dir,
        "  backend: postgresql\n  dsn: postgresql://mineclaw@db.example:5432/mc\n"
        "  lease_ttl_s: 2.5\n  lease_renew_s: 0.5\n  lease_deadline_s: 1.5\n"
        "  deadline_s: 4\n  statement_timeout_s: 3\n",
    )
    storage = load_control_plane(config_dir, environ={}).config.storage
    assert (storage.lease_ttl_s, storage.lease_renew_s, storage.lease_deadline_s) == (
        2.5,
        0.5,
        1.5,
    )
    assert (storage.deadline_s, storage.statement_timeout_s) == (4, 3)


@pytest.mark.parametrize(
    ("storage", "message"),
    [
        # A poll that takes its whole deadline right before the expiry would lose every lease.
        ("  lease_ttl_s: 4\n  lease_renew_s: 1\n  lease_deadline_s: 3\n", "lease_ttl_s (4)"),
        ("  deadline_s: 5\n  statement_timeout_s: 5\n", "statement_timeout_s (5)"),
        ("  lease_ttl_s: 0\n", "storage.lease_ttl_s"),
    ],
)
def test_lease_timings_that_cannot_work_are_refused(
    config_dir: Path, storage: str, message: str
) -> None:
    write_config(config_dir, storage)
    text = refusal(config_dir)
    assert "config.yml" in text and message in text, text
