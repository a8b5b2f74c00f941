"""``providers.yml``: model providers, their transport settings and the models they serve.

A model is addressed as ``provider_id/model_name``. The provider id is the part before the
first ``/``; everything after it (slashes included, e.g. ``openrouter/meta-llama/llama-3``) is
the model name sent on the wire.

Secrets: ``api_key`` is a literal or exactly ``${ENV_NAME}``; the reference is resolved at load
from the validation context's ``environ`` (the control-plane loader passes the process
environment merged over ``.env``), or from ``os.environ`` when a model is built directly. An
unresolved ``api_key`` reference does not fail the load, so a fresh install starts without a key:
the key is then empty, ``ProviderConfig.api_key_missing`` is true, the loader reports a warning,
and ``require_api_key()`` raises a clear ``ConfigError`` when a turn needs the key. Unresolved
references in ``extra_headers`` do fail the load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.functional_validators import ModelWrapValidatorHandler

from bridge.control.base import StrictModel
from bridge.control.secrets import (
    EMBEDDED_REFERENCE,
    REQUEST_TEMPLATES,
    Secret,
    context_environ,
    lookup,
    unset_reference,
    whole_reference,
)
from bridge.errors import ConfigError

ApiType = Literal["openai_chat_completions", "openai_responses"]
# The server families of `bridge.providers.compat` (kept equal by a test: the control plane
# sits below the provider layer and cannot import it).
CompatName = Literal[
    "auto",
    "openai",
    "llama-cpp",
    "llama-cpp-python",
    "vllm",
    "ollama",
    "gemini",
    "lmstudio",
    "tgi",
    "litellm",
]

PROVIDER_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128}")
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")
MAX_HEADERS = 32
MAX_HEADER_VALUE_CHARS = 4096
MAX_USER_AGENT_CHARS = 256

# Headers the HTTP transport and the provider layer set themselves; an owner value would either
# break framing, leak or replace the credential, or change how the stream is negotiated.
MANAGED_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "host",
        "content-length",
        "content-type",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "upgrade",
        "te",
        "trailer",
        "expect",
        "accept",
        "accept-encoding",
        "user-agent",
        "cookie",
    }
)

# Request-body keys the provider layer owns; ``extra_body`` may add to a request, never redefine
# what the model sees, how it streams or how much it may spend.
MANAGED_BODY_KEYS: frozenset[str] = frozenset(
    {
        "model",
        "messages",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "functions",
        "function_call",
        "stream",
        "stream_options",
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "store",
        "previous_response_id",
        "prompt_cache_key",
        "n",
    }
)


PROMPT_CACHE_KEY_HOSTS = frozenset({"api.openai.com"})
PROMPT_CACHE_KEY_HOST_SUFFIXES = (".openai.azure.com",)
"""Hosts whose APIs take ``prompt_cache_key``: it is sent to them unless switched off."""


class ApiConfig(StrictModel):
    """Which wire protocol the provider speaks and where its API root is."""

    type: ApiType
    base_url: str = Field(min_length=8, max_length=2048)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
            raise ValueError("must be an http:// or https:// URL without query or fragment")
        if "@" in value.split("/")[2]:
            raise ValueError("must not carry credentials; use api_key")
        return value.rstrip("/")


class TimeoutConfig(StrictModel):
    """Transport timeouts in seconds."""

    connect_s: float = Field(default=10.0, gt=0, le=300)
    read_s: float = Field(default=120.0, gt=0, le=3600)


class RetryConfig(StrictModel):
    """The retry budget of one model request (attempts include the first)."""

    max_attempts: int = Field(default=3, ge=1, le=10)
    initial_backoff_ms: int = Field(default=500, ge=0, le=60_000)
    max_backoff_ms: int = Field(default=8000, ge=0, le=300_000)
    max_retry_after_ms: int = Field(default=30_000, ge=0, le=600_000)

    @model_validator(mode="after")
    def _ordered(self) -> RetryConfig:
        if self.initial_backoff_ms > self.max_backoff_ms:
            raise ValueError("initial_backoff_ms must not exceed max_backoff_ms")
        return self


class ProviderConfig(StrictModel):
    """One provider endpoint."""

    api: ApiConfig
    api_key: Secret = Secret("")
    # Header values may be credentials: kept out of repr() so no log or traceback shows them.
    extra_headers: dict[str, str] = Field(default_factory=dict, repr=False)
    user_agent: str | None = Field(default=None, min_length=1, max_length=MAX_USER_AGENT_CHARS)
    timeout: TimeoutConfig = Field(default_factory=TimeoutConfig)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    native_tools: list[dict[str, Any]] = Field(default_factory=list, max_length=64)
    # None: on where the provider is known to take the field (see `sends_prompt_cache_key`).
    prompt_cache_key: bool | None = None
    # The server family whose wire habits requests follow (`bridge.providers.compat`).
    compat: CompatName = "auto"

    _api_key_env: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_reference(
        cls, data: Any, handler: ModelWrapValidatorHandler[ProviderConfig]
    ) -> ProviderConfig:
        model = handler(data)
        if isinstance(data, Mapping) and isinstance(data.get("api_key"), str):
            model._api_key_env = whole_reference(data["api_key"])
        return model

    @field_validator("api_key", mode="before")
    @classmethod
    def _resolve_key(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        if CONTROL_CHARACTERS.search(value):
            raise ValueError("must not contain control characters")
        name = whole_reference(value)
        if name is None:
            if "${" in value:
                raise ValueError("an environment reference must be the whole value: ${NAME}")
            return value
        return lookup(name, context_environ(info)) or ""

    @field_validator("extra_headers", mode="before")
    @classmethod
    def _check_headers(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, Mapping):
            return value
        if len(value) > MAX_HEADERS:
            raise ValueError(f"at most {MAX_HEADERS} headers")
        seen: set[str] = set()
        resolved: dict[str, Any] = {}
        for name, header_value in value.items():
            if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
                raise ValueError(f"header name {name!r} is not a valid HTTP token")
            lowered = name.lower()
            if lowered in MANAGED_HEADERS or lowered.startswith(("proxy-", "sec-")):
                raise ValueError(f"header {name!r} is managed by the transport and may not be set")
            if lowered in seen:
                raise ValueError(f"header {name!r} is listed twice (names ignore case)")
            seen.add(lowered)
            if isinstance(header_value, str):
                header_value = _resolve_header_value(name, header_value, context_environ(info))
            resolved[name] = header_value
        return resolved

    @field_validator("user_agent")
    @classmethod
    def _printable_user_agent(cls, value: str | None) -> str | None:
        if value is not None and CONTROL_CHARACTERS.search(value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("native_tools")
    @classmethod
    def _native_only(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for index, tool in enumerate(value):
            kind = tool.get("type")
            if not isinstance(kind, str) or not kind:
                raise ValueError(f"entry {index} needs a string 'type'")
            if kind == "function":
                raise ValueError(
                    f"entry {index}: 'type: function' is refused; functions come from the tool "
                    "registry and functions.yml"
                )
        return value

    @property
    def sends_prompt_cache_key(self) -> bool:
        """Whether models of this provider send ``prompt_cache_key`` unless they say otherwise:
        as configured, or, unset, for OpenAI's own API and Azure OpenAI, which document the
        field. Other OpenAI-compatible servers may refuse a field they do not know, so they
        get it only when the owner turns it on."""
        if self.prompt_cache_key is not None:
            return self.prompt_cache_key
        host = self.api.base_url.split("/")[2].split(":")[0].lower()
        return host in PROMPT_CACHE_KEY_HOSTS or host.endswith(PROMPT_CACHE_KEY_HOST_SUFFIXES)

    @property
    def api_key_env(self) -> str | None:
        """The environment variable ``api_key`` referenced, if it was a reference."""
        return self._api_key_env

    @property
    def api_key_missing(self) -> bool:
        """True when ``api_key`` referenced a variable that is unset or empty."""
        return self._api_key_env is not None and not self.api_key.get_secret_value()

    def require_api_key(self) -> str:
        """The key, or a ``ConfigError`` naming the variable to set (never a value)."""
        if self.api_key_missing:
            raise ConfigError(
                f"api_key refers to ${{{self._api_key_env}}}, which is not set: "
                f"add it to the environment or to .env"
            )
        return self.api_key.get_secret_value()


def _resolve_header_value(name: str, value: str, environ: Mapping[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable in REQUEST_TEMPLATES:
            return match.group(0)
        resolved = lookup(variable, environ)
        if resolved is None:
            raise ValueError(f"header {name!r}: {unset_reference(variable, environ)}")
        return resolved

    # Checked before and after substitution: an environment value must not smuggle a line break.
    for text in (value, EMBEDDED_REFERENCE.sub(substitute, value)):
        if CONTROL_CHARACTERS.search(text):
            raise ValueError(f"header {name!r} value contains control characters")
        if len(text) > MAX_HEADER_VALUE_CHARS:
            raise ValueError(f"header {name!r} value is longer than {MAX_HEADER_VALUE_CHARS}")
        value = text
    return value


class ModelLimits(StrictModel):
    """Token budgets of a model; the compaction trigger must leave room for one full answer."""

    context_window: int = Field(ge=1024, le=100_000_000)
    max_output_tokens: int = Field(ge=1, le=10_000_000)
    compaction_trigger: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _room_for_output(self) -> ModelLimits:
        room = self.context_window - self.max_output_tokens
        if room < 1:
            raise ValueError("max_output_tokens must be smaller than context_window")
        if self.compaction_trigger is not None and self.compaction_trigger > room:
            raise ValueError(
                f"compaction_trigger must be at most context_window - max_output_tokens ({room})"
            )
        return self


class InterleavedConfig(StrictModel):
    """Where a Chat Completions provider streams reasoning between tool calls:
    ``reasoning_content`` (DeepSeek, older vLLM) or ``reasoning`` (vLLM 0.10 and later)."""

    field: Literal["reasoning_content", "reasoning"]


class RequestExtras(StrictModel):
    """Additions to every request for this model. ``prompt_cache_key``: None follows the
    provider (`ProviderConfig.sends_prompt_cache_key`). ``tool_choice``: what is sent while
    tools are offered, ``auto``, ``required``, ``omit`` or a tool's name
    (`bridge.providers.projection.wire_tool_choice`)."""

    prompt_cache_key: bool | None = None
    tool_choice: str = Field(default="auto", pattern=r"^[A-Za-z0-9_-]{1,64}$")
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra_body")
    @classmethod
    def _unmanaged(cls, value: dict[str, Any]) -> dict[str, Any]:
        managed = sorted(MANAGED_BODY_KEYS.intersection(value))
        if managed:
            raise ValueError(f"may not set managed fields: {', '.join(managed)}")
        return value


MAX_PRICE_PER_MILLION = 1_000_000.0


class ModelPrice(StrictModel):
    """What a million tokens cost, for the cost estimates of the metrics (any one currency,
    the same for every model). ``cached_input_per_million`` is for input tokens the provider
    served from its prompt cache; unset, they cost as much as other input."""

    input_per_million: float = Field(ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False)
    output_per_million: float = Field(ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False)
    cached_input_per_million: float | None = Field(
        default=None, ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False
    )

    @property
    def cached_input(self) -> float:
        if self.cached_input_per_million is None:
            return self.input_per_million
        return self.cached_input_per_million


MAX_FALLBACKS = 4


class ModelConfig(StrictModel):
    """One model of one provider. ``fallbacks``: other models of ``models`` a turn goes on with,
    in order, when its attempts at this one are spent for a failure another provider may not
    share (busy, timed out, broken stream, quota, misconfigured)."""

    limits: ModelLimits
    interleaved: InterleavedConfig | None = None
    request: RequestExtras = Field(default_factory=RequestExtras)
    fallbacks: list[str] = Field(default_factory=list, max_length=MAX_FALLBACKS)
    price: ModelPrice | None = None


class ResolvedModel(NamedTuple):
    """A model reference taken apart: ``model_name`` is what goes on the wire."""

    provider_id: str
    provider: ProviderConfig
    model_name: str
    model: ModelConfig


def split_model_ref(ref: str) -> tuple[str, str]:
    """``"openai/gpt-4o"`` into ``("openai", "gpt-4o")``; ``ConfigError`` when malformed."""
    provider_id, slash, model_name = ref.partition("/")
    if not slash or not PROVIDER_ID.fullmatch(provider_id) or not model_name.strip():
        raise ConfigError(f"model reference {ref!r} is not of the form provider/model")
    if model_name != model_name.strip() or CONTROL_CHARACTERS.search(model_name):
        raise ConfigError(f"model reference {ref!r} has surrounding spaces or control characters")
    return provider_id, model_name


class ProvidersFile(StrictModel):
    """The whole of ``providers.yml``. ``schema`` is spelled ``schema_`` in Python."""

    schema_: Literal[1] = Field(alias="schema")
    default: str = Field(min_length=3, max_length=256)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict, max_length=64)
    models: dict[str, ModelConfig] = Field(default_factory=dict, max_length=256)

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> ProvidersFile:
        context = info.context
        if isinstance(context, Mapping) and context.get("defer_cross_checks"):
            return self
        issues = self.cross_check()
        if issues:
            raise ValueError("; ".join(f"{'.'.join(path)}: {message}" for path, message in issues))
        return self

    def cross_check(self) -> list[tuple[tuple[str, ...], str]]:
        """Rules spanning entries, each as (field path, message); empty when consistent."""
        issues: list[tuple[tuple[str, ...], str]] = []
        for provider_id in self.providers:
            if not PROVIDER_ID.fullmatch(provider_id):
                issues.append(
                    (("providers", provider_id), "provider ids use a-z, 0-9, '_' and '-'")
                )
        for ref, model in self.models.items():
            try:
                provider_id, _ = split_model_ref(ref)
            except ConfigError as exc:
                issues.append((("models", ref), str(exc)))
                continue
            provider = self.providers.get(provider_id)
            if provider is None:
                issues.append((("models", ref), f"provider {provider_id!r} is not defined"))
            elif model.interleaved is not None and provider.api.type != "openai_chat_completions":
                issues.append(
                    (
                        ("models", ref, "interleaved"),
                        "interleaved reasoning is only for openai_chat_completions providers",
                    )
                )
            issues.extend(self._fallback_issues(ref, model))
        if self.default not in self.models:
            issues.append((("default",), f"model {self.default!r} is not defined under models"))
        return issues

    def providers_in_use(self) -> frozenset[str]:
        """The providers a turn may call: the default model's and its fallbacks'."""
        refs = [self.default]
        model = self.models.get(self.default)
        if model is not None:
            refs += model.fallbacks
        used: set[str] = set()
        for ref in refs:
            try:
                used.add(split_model_ref(ref)[0])
            except ConfigError:
                continue  # cross_check reports it
        return frozenset(used)

    def _fallback_issues(self, ref: str, model: ModelConfig) -> list[tuple[tuple[str, ...], str]]:
        issues: list[tuple[tuple[str, ...], str]] = []
        seen: set[str] = set()
        for index, fallback in enumerate(model.fallbacks):
            path = ("models", ref, "fallbacks", str(index))
            if fallback == ref:
                issues.append((path, "a model cannot be its own fallback"))
            elif fallback in seen:
                issues.append((path, f"{fallback!r} is listed twice"))
            elif fallback not in self.models:
                issues.append((path, f"model {fallback!r} is not defined under models"))
            seen.add(fallback)
        return issues

    def resolve(self, ref: str | None = None) -> ResolvedModel:
        """Look up ``ref`` (the default model when ``None``); ``ConfigError`` when unknown."""
        ref = self.default if ref is None else ref
        provider_id, model_name = split_model_ref(ref)
        model = self.models.get(ref)
        provider = self.providers.get(provider_id)
        if model is None or provider is None:
            raise ConfigError(f"model {ref!r} is not configured in providers.yml")
        if model.request.prompt_cache_key is None:
            # Resolved here, so whoever builds the model's settings sends what the owner chose.
            request = model.request.model_copy(
                update={"prompt_cache_key": provider.sends_prompt_cache_key}
            )
            model = model.model_copy(update={"request": request})
        return ResolvedModel(provider_id, provider, model_name, model)
