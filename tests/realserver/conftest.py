"""Real model servers: collected only where ``make model-servers`` could build them.

A machine without a C/C++ compiler or cmake gets one line from ``make model-servers`` and in
the test report header, and the rest of the suite runs, as with the Paper modules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.interaction.processes import free_port

from .model_servers import (
    LLAMA_CPP_PYTHON_READY,
    ModelServer,
    llama_cpp_python,
    llama_cpp_python_command,
    llama_server,
    make_model,
    running,
)

collect_ignore_glob: list[str] = []
if llama_cpp_python() is None:
    collect_ignore_glob.append("test_llama_cpp_python_*.py")
if llama_server() is None or llama_cpp_python() is None:
    collect_ignore_glob.append("test_llama_server_*.py")


def pytest_report_header() -> list[str]:
    built = {"llama-cpp-python": llama_cpp_python(), "llama-server": llama_server()}
    missing = [name for name, path in built.items() if path is None]
    if not missing:
        return []
    return [f"not run: the real-server tests of {', '.join(missing)} (make model-servers)"]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random-weight GGUF, made once per run from tiny_gguf.py (fixed seed)."""
    python = llama_cpp_python()
    assert python is not None
    return make_model(python, tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="session")
def endless_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same model whose answers never end by themselves (streams still running)."""
    python = llama_cpp_python()
    assert python is not None
    return make_model(python, tmp_path_factory.mktemp("model") / "endless.gguf", endless=True)


@pytest.fixture
async def lcp_server(tiny_model: Path) -> AsyncIterator[ModelServer]:
    python = llama_cpp_python()
    assert python is not None
    port = free_port()
    command = llama_cpp_python_command(python, tiny_model, port)
    async with running("llama-cpp-python", command, port, LLAMA_CPP_PYTHON_READY) as server:
        yield server
