"""The base of every control-plane model: strict types, unknown fields refused, frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Strict so ``"10"`` is not silently an int and ``1`` is not silently ``true``."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, populate_by_name=True, hide_input_in_errors=True
    )
