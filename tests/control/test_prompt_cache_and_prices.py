"""providers.yml: ``prompt_cache_key`` on by default where the provider takes it, and the
per-model prices the metrics' cost estimates use (validated with file, line and field)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bridge.app.serving.provider_settings import model_settings
from bridge.control import init_config_dir, load_control_plane
from bridge.control.plane import ConfigLoadError

from .test_providers import provider, providers_file, validate


def resolved_sends(provider_data: dict[str, Any], model_request: dict[str, Any]) -> bool:
    model = {"limits": {"context_window": 8192, "max_output_tokens": 1024}}
    if model_request:
        model["request"] = model_request
    data = providers_file(providers={"ex": provider_data}, models={"ex/model-a": model})
    resolved = validate(data).resolve()
    return model_settings(resolved.model_name, resolved.model).prompt_cache_key


def at(base_url: str, **overrides: Any) -> dict[str, Any]:
    return provider(api={"type": "openai_chat_completions", "base_url": base_url}, **overrides)


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://api.openai.com/v1", True),
        ("https://my-team.openai.azure.com/openai/v1", True),
        ("https://api.example.com/v1", False),
        ("http://127.0.0.1:8000/v1", False),
        # Only the host decides, not a path that mentions OpenAI.
        ("https://proxy.example.com/api.openai.com/v1", False),
    ],
)
def test_unset_it_is_sent_where_the_provider_takes_it(base_url: str, expected: bool) -> None:
    assert resolved_sends(at(base_url), {}) is expected


def test_the_provider_setting_and_the_model_setting_override_the_host_rule() -> None:
    assert resolved_sends(at("https://api.example.com/v1", prompt_cache_key=True), {})
    assert not resolved_sends(at("https://api.openai.com/v1", prompt_cache_key=False), {})
    # The model's own setting wins over its provider's.
    openai_off = at("https://api.openai.com/v1", prompt_cache_key=False)
    assert resolved_sends(openai_off, {"prompt_cache_key": True})
    assert not resolved_sends(at("https://api.openai.com/v1"), {"prompt_cache_key": False})


def test_the_shipped_configuration_sends_it(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    plane = load_control_plane(tmp_path, environ={"OPENAI_API_KEY": "sk-x"})
    resolved = plane.providers.resolve()
    assert model_settings(resolved.model_name, resolved.model).prompt_cache_key


def test_prices_are_read_with_cached_input_defaulting_to_input() -> None:
    model = {
        "limits": {"context_window": 8192, "max_output_tokens": 1024},
        "price": {"input_per_million": 2.5, "output_per_million": 10},
    }
    price = validate(providers_file(models={"ex/model-a": model})).resolve().model.price
    assert price is not None
    assert (price.input_per_million, price.output_per_million, price.cached_input) == (2.5, 10, 2.5)


PRICED = """\
models:
  openai/gpt-4o-mini:
    limits:
      context_window: 128000
      max_output_tokens: 16384
    price:
      input_per_million: {input}
      output_per_million: 0.6
"""


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("-1", "input_per_million"),
        ("2000000", "input_per_million"),
        ("'cheap'", "input_per_million"),
    ],
)
def test_a_bad_price_names_file_line_and_field(tmp_path: Path, value: str, field: str) -> None:
    init_config_dir(tmp_path)
    path = tmp_path / "providers.yml"
    text = path.read_text()
    text = text[: text.index("models:")] + PRICED.format(input=value)
    path.write_text(text)
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(tmp_path, environ={"OPENAI_API_KEY": "sk-x"})
    problem = next(p for p in caught.value.problems if not p.warning)
    line = text.splitlines().index(f"      input_per_million: {value}") + 1
    assert (problem.file, problem.line) == ("providers.yml", line)
    assert problem.path == f"models.openai/gpt-4o-mini.price.{field}"


def test_a_price_without_output_is_refused(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    path = tmp_path / "providers.yml"
    text = path.read_text()
    text = text[: text.index("models:")] + PRICED.format(input=1).replace(
        "      output_per_million: 0.6\n", "      outptu_per_million: 0.6\n"
    )
    path.write_text(text)
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(tmp_path, environ={"OPENAI_API_KEY": "sk-x"})
    paths = {p.path for p in caught.value.problems if not p.warning}
    assert "models.openai/gpt-4o-mini.price.outptu_per_million" in paths
