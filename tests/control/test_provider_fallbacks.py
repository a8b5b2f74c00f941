"""``models.<ref>.fallbacks`` in providers.yml (issue 17)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from .test_providers import providers_file, validate

LIMITS = {"limits": {"context_window": 8192, "max_output_tokens": 1024}}


def models(fallbacks: list[Any]) -> dict[str, Any]:
    return {
        "ex/model-a": {**LIMITS, "fallbacks": fallbacks},
        "ex/model-b": LIMITS,
    }


def test_fallbacks_name_other_models_in_order() -> None:
    parsed = validate(providers_file(models=models(["ex/model-b"])))
    assert parsed.resolve("ex/model-a").model.fallbacks == ["ex/model-b"]
    assert parsed.resolve("ex/model-b").model.fallbacks == []


@pytest.mark.parametrize(
    ("fallbacks", "message"),
    [
        (["ex/model-a"], "models.ex/model-a.fallbacks.0: a model cannot be its own fallback"),
        (
            ["ex/model-b", "ex/model-b"],
            "models.ex/model-a.fallbacks.1: 'ex/model-b' is listed twice",
        ),
        (["ex/missing"], "models.ex/model-a.fallbacks.0: model 'ex/missing' is not defined"),
        (["ex/model-b"] * 5, "at most 4 items"),
        ([7], "valid string"),
    ],
)
def test_bad_fallbacks_are_refused_naming_the_entry(fallbacks: list[Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate(providers_file(models=models(fallbacks)))
    assert message in str(caught.value)
