"""mcp.require_review: a tool is offered only while its description and schema, as shown, have
the owner's review; a changed description waits for a review again. The CLI shows the tools
and records reviews in the state Functions use."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from bridge.app.serving.storage_settings import storage_target
from bridge.cli import main
from bridge.control import init_config_dir
from bridge.control.plane import ControlPlaneStore
from bridge.functions.review_state import ReviewBook

from .harness import SERVERS, TOOLBOX, harness, mcp_config, stdio_server


async def test_only_reviewed_descriptions_and_schemas_are_offered(tmp_path: Path) -> None:
    approved: set[tuple[str, str]] = set()
    async with harness(tmp_path, mcp_config({"wiki": stdio_server()})) as h:
        h.clients._reviewed = lambda name, digest: (name, digest) in approved
        connection = await h.ready("wiki")
        assert h.clients.tools(require_review=True) == ()
        assert "awaiting review" in h.clients.status(require_review=True)[0]
        echo = next(t for t in connection.listing.offered if t.name == "mcp__wiki__echo")
        approved.add((echo.name, echo.digest))
        assert [t.name for t in h.clients.tools(require_review=True)] == ["mcp__wiki__echo"]
        assert len(h.clients.tools()) == len(connection.listing.offered)  # review not required

        assert (await h.call("mcp__wiki__reword")).ok  # the server changes echo's description
        await h.until(
            lambda: (
                next(t for t in connection.listing.offered if t.name == echo.name).digest
                != echo.digest
            )
        )
        assert h.clients.tools(require_review=True) == ()


def test_the_cli_shows_the_tools_and_records_a_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config"
    init_config_dir(config)
    document = yaml.safe_load((config / "config.yml").read_text())
    document["mcp"] = {
        "enabled": True,
        "require_review": True,
        "servers": {
            "wiki": {
                "transport": "stdio",
                "command": sys.executable,
                "args": [TOOLBOX],
                "read": [str(SERVERS)],
            }
        },
    }
    (config / "config.yml").write_text(yaml.safe_dump(document))

    assert main(["mcp", "tools", "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert "mcp__wiki__echo [needs review]" in shown and "Say the text back." in shown

    assert main(["mcp", "review", "mcp__wiki__echo", "--yes", "--config", str(config)]) == 0
    plane = ControlPlaneStore(config, environ={}).current
    with storage_target(plane, config).open_reviews() as reviews:
        book = ReviewBook(reviews)
        [(name, digest)] = [pair for pair in reviews.reviewed() if pair[0].startswith("mcp__")]
        assert name == "mcp__wiki__echo" and book.has(name, digest)
    assert main(["mcp", "tools", "--config", str(config)]) == 0
    assert "mcp__wiki__echo [reviewed]" in capsys.readouterr().out

    assert main(["mcp", "review", "mcp__wiki__nope", "--yes", "--config", str(config)]) == 2
