"""The decision model's answer: one strict JSON object, validated, or nothing.

``{"answer": true|false, "confidence": 0..1, "reason": "..."}`` and nothing else: no prose
around it, no code fence, no other field, ``answer`` a JSON boolean. Anything else is a
malformed answer, which the contract counts as the model being unavailable (the classifier
decides instead); a model that cannot keep to the shape is not evidence of anything.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bridge.errors import MineclawError

MAX_REASON_CHARS = 300
MAX_ANSWER_CHARS = 2000
"""A longer reply is not the small object asked for (and is not parsed at all)."""


class MalformedAnswer(MineclawError):
    """The model's reply was not the JSON object asked for."""


class DecisionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    answer: bool
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)


def parse_answer(text: str) -> DecisionAnswer:
    """The answer in ``text``; raises ``MalformedAnswer`` saying what was wrong (never quoting
    the reply: it is model text)."""
    body = text.strip()
    if not body:
        raise MalformedAnswer("empty reply")
    if len(body) > MAX_ANSWER_CHARS:
        raise MalformedAnswer(f"reply of {len(body)} characters, not one small JSON object")
    try:
        return DecisionAnswer.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'reply'}: {error['type']}"
            for error in exc.errors(include_input=False, include_url=False)[:3]
        )
        raise MalformedAnswer(problems) from None
