"""Fixtures of the provider tests: the replay server and the official schema."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest
import referencing
import yaml
from referencing.jsonschema import DRAFT202012

from bridge.providers.items import ApiType

from .provider_replay_server import ReplayServer, vectors_dir
from .provider_support import BodyValidator

SCHEMA_URI = "urn:openai:openapi"
REQUEST_SCHEMAS = {
    "openai_chat_completions": "CreateChatCompletionRequest",
    "openai_responses": "CreateResponse",
}


@pytest.fixture(scope="session")
def openapi_registry() -> referencing.Registry[Any]:
    """The official OpenAPI document, loaded once, registered so its ``$ref``s resolve."""
    path = vectors_dir() / "openai-openapi" / "openapi.yaml"
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    resource = referencing.Resource.from_contents(document, default_specification=DRAFT202012)
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(SCHEMA_URI, resource)
    return registry


@pytest.fixture(scope="session")
def validate_body(openapi_registry: referencing.Registry[Any]) -> BodyValidator:
    validators = {
        api_type: jsonschema.Draft202012Validator(
            {"$ref": f"{SCHEMA_URI}#/components/schemas/{name}"}, registry=openapi_registry
        )
        for api_type, name in REQUEST_SCHEMAS.items()
    }

    def validate(api_type: ApiType, body: dict[str, Any]) -> None:
        errors = sorted(validators[api_type].iter_errors(body), key=lambda e: e.path)
        assert not errors, "\n".join(
            f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:5]
        )

    return validate


@pytest.fixture
async def replay_server(validate_body: BodyValidator) -> AsyncIterator[ReplayServer]:
    """A real local HTTP server; every request body it received is validated at the end."""
    server = ReplayServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
    for request in server.requests:
        path = request.path
        if path.endswith("/chat/completions"):
            validate_body("openai_chat_completions", request.json())
        elif path.endswith("/responses"):
            validate_body("openai_responses", request.json())
