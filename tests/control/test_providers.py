"""providers.yml: secrets, headers, request extras and cross-entry rules."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bridge.control.providers import ProviderConfig, ProvidersFile, split_model_ref
from bridge.errors import ConfigError

SECRET = "sk-test-0123456789abcdef"


def provider(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "api": {"type": "openai_chat_completions", "base_url": "https://api.example.com/v1/"},
        "api_key": "${TEST_KEY}",
    }
    data.update(overrides)
    return data


def providers_file(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema": 1,
        "default": "ex/model-a",
        "providers": {"ex": provider()},
        "models": {"ex/model-a": {"limits": {"context_window": 8192, "max_output_tokens": 1024}}},
    }
    data.update(overrides)
    return data


def validate(data: dict[str, Any], environ: dict[str, str] | None = None) -> ProvidersFile:
    context = {"environ": {"TEST_KEY": SECRET} if environ is None else environ}
    return ProvidersFile.model_validate(data, context=context)


def messages(exc: ValidationError) -> str:
    return " | ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


class TestValid:
    def test_resolves_default_model(self) -> None:
        resolved = validate(providers_file()).resolve()
        assert resolved.provider_id == "ex"
        assert resolved.model_name == "model-a"
        assert resolved.provider.api.base_url == "https://api.example.com/v1"
        assert resolved.provider.api_key.get_secret_value() == SECRET
        assert resolved.provider.retry.max_attempts == 3
        assert resolved.provider.timeout.read_s == 120

    def test_wire_name_is_everything_after_the_first_slash(self) -> None:
        data = providers_file(
            default="ex/meta-llama/llama-3",
            models={
                "ex/meta-llama/llama-3": {
                    "limits": {"context_window": 8192, "max_output_tokens": 1}
                }
            },
        )
        assert validate(data).resolve().model_name == "meta-llama/llama-3"

    def test_unknown_model_reference(self) -> None:
        with pytest.raises(ConfigError):
            validate(providers_file()).resolve("ex/other")
        with pytest.raises(ConfigError):
            split_model_ref("no-slash")

    def test_literal_key(self) -> None:
        config = ProviderConfig.model_validate(provider(api_key=SECRET))
        assert config.api_key.get_secret_value() == SECRET
        assert not config.api_key_missing and config.api_key_env is None


class TestSecrets:
    def test_missing_key_is_lazy_and_never_printed(self) -> None:
        config = validate(providers_file(), environ={}).providers["ex"]
        assert config.api_key_missing and config.api_key_env == "TEST_KEY"
        with pytest.raises(ConfigError, match=r"\$\{TEST_KEY\}"):
            config.require_api_key()

    def test_resolved_key_and_header_values_stay_out_of_repr(self) -> None:
        data = providers_file(
            providers={"ex": provider(extra_headers={"X-Token": "${HDR}", "X-Fixed": "hv-abcdef"})}
        )
        config = validate(data, environ={"TEST_KEY": SECRET, "HDR": "hdr-secret-value"})
        text = repr(config) + str(config)
        assert config.providers["ex"].extra_headers["X-Token"] == "hdr-secret-value"
        for secret in (SECRET, "hdr-secret-value", "hv-abcdef"):
            assert secret not in text
        assert repr(config.providers["ex"].api_key) == "Secret('***')"
        assert str(config.providers["ex"].api_key) == "***"

    def test_key_errors_do_not_quote_the_key(self) -> None:
        with pytest.raises(ValidationError) as caught:
            ProviderConfig.model_validate(provider(api_key="sk-abc\ndef"))
        assert "sk-abc" not in str(caught.value)

    def test_partial_reference_refused(self) -> None:
        with pytest.raises(ValidationError, match="whole value"):
            ProviderConfig.model_validate(provider(api_key="Bearer ${TEST_KEY}"))


class TestHeaders:
    def test_templates_stay_and_env_resolves(self) -> None:
        config = ProviderConfig.model_validate(
            provider(extra_headers={"X-Session": "s-${session_id}", "X-Org": "${ORG}"}),
            context={"environ": {"ORG": "org-1"}},
        )
        assert config.extra_headers == {"X-Session": "s-${session_id}", "X-Org": "org-1"}

    @pytest.mark.parametrize(
        ("headers", "message"),
        [
            ({"Authorization": "x"}, "managed"),
            ({"host": "x"}, "managed"),
            ({"Content-Length": "1"}, "managed"),
            ({"Transfer-Encoding": "x"}, "managed"),
            ({"CONNECTION": "x"}, "managed"),
            ({"Proxy-Foo": "x"}, "managed"),
            ({"Bad Name": "x"}, "valid HTTP token"),
            ({"X-A:": "x"}, "valid HTTP token"),
            ({"X-A": "x", "x-a": "y"}, "twice"),
            ({"X-A": "line\r\nInjected: 1"}, "control"),
            ({"X-A": "x" * 5000}, "longer"),
            ({"X-A": "${NOT_SET}"}, "not set"),
            ({"X-A": "${NEWLINE}"}, "control"),
            ({f"X-{i}": "v" for i in range(40)}, "at most"),
        ],
    )
    def test_refused(self, headers: dict[str, str], message: str) -> None:
        with pytest.raises(ValidationError) as caught:
            ProviderConfig.model_validate(
                provider(extra_headers=headers), context={"environ": {"NEWLINE": "a\nb"}}
            )
        assert message in messages(caught.value)
        assert "a\nb" not in str(caught.value)


class TestRules:
    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            ({"api": {"type": "anthropic", "base_url": "https://x.example"}}, "api.type"),
            ({"api": {"type": "openai_responses", "base_url": "ftp://x.example"}}, "http"),
            (
                {"api": {"type": "openai_responses", "base_url": "https://u:p@x.example"}},
                "credentials",
            ),
            ({"native_tools": [{"type": "function", "name": "x"}]}, "type: function"),
            ({"native_tools": [{"name": "x"}]}, "string 'type'"),
            ({"retry": {"max_attempts": 11}}, "retry.max_attempts"),
            ({"retry": {"initial_backoff_ms": 9000, "max_backoff_ms": 8000}}, "initial_backoff_ms"),
            ({"timeout": {"connect_s": 0}}, "timeout.connect_s"),
            ({"unknown": 1}, "unknown"),
        ],
    )
    def test_provider_fields(self, overrides: dict[str, Any], message: str) -> None:
        with pytest.raises(ValidationError) as caught:
            ProviderConfig.model_validate(provider(**overrides), context={"environ": {}})
        assert message in messages(caught.value)

    def test_native_tools_pass_through_untouched(self) -> None:
        tool = {"type": "web_search", "search_context_size": "low", "nested": {"a": [1]}}
        config = ProviderConfig.model_validate(provider(native_tools=[tool]))
        assert config.native_tools == [tool]

    @pytest.mark.parametrize(
        ("model", "message"),
        [
            ({"limits": {"context_window": 8192, "max_output_tokens": 8192}}, "smaller"),
            (
                {
                    "limits": {
                        "context_window": 8192,
                        "max_output_tokens": 1024,
                        "compaction_trigger": 7169,
                    }
                },
                "at most context_window - max_output_tokens (7168)",
            ),
            (
                {
                    "limits": {"context_window": 8192, "max_output_tokens": 1},
                    "request": {"extra_body": {"model": "x"}},
                },
                "managed fields: model",
            ),
            (
                {
                    "limits": {"context_window": 8192, "max_output_tokens": 1},
                    "request": {"extra_body": {"stream": False, "max_tokens": 1}},
                },
                "max_tokens, stream",
            ),
            (
                {
                    "limits": {"context_window": 8192, "max_output_tokens": 1},
                    "interleaved": {"field": "thinking"},
                },
                "interleaved.field",
            ),
        ],
    )
    def test_model_fields(self, model: dict[str, Any], message: str) -> None:
        with pytest.raises(ValidationError) as caught:
            validate(providers_file(models={"ex/model-a": model}))
        assert message in messages(caught.value)

    def test_compaction_trigger_at_the_bound_is_fine(self) -> None:
        limits = {"context_window": 8192, "max_output_tokens": 1024, "compaction_trigger": 7168}
        data = providers_file(models={"ex/model-a": {"limits": limits}})
        assert validate(data).resolve().model.limits.compaction_trigger == 7168

    def test_cross_checks_all_reported(self) -> None:
        models = {
            "ex/model-a": {"limits": {"context_window": 8192, "max_output_tokens": 1}},
            "gone/model": {"limits": {"context_window": 8192, "max_output_tokens": 1}},
            "ex/reasoner": {
                "limits": {"context_window": 8192, "max_output_tokens": 1},
                "interleaved": {"field": "reasoning_content"},
            },
        }
        data = providers_file(
            default="ex/missing",
            models=models,
            providers={
                "ex": provider(api={"type": "openai_responses", "base_url": "http://x.test"})
            },
        )
        checked = ProvidersFile.model_validate(
            data, context={"environ": {}, "defer_cross_checks": True}
        )
        issues = dict(checked.cross_check())
        assert issues[("models", "gone/model")] == "provider 'gone' is not defined"
        assert (
            "only for openai_chat_completions" in issues[("models", "ex/reasoner", "interleaved")]
        )
        assert "'ex/missing' is not defined" in issues[("default",)]
        with pytest.raises(ValidationError, match="gone/model"):
            validate(data)

    def test_interleaved_allowed_for_chat_completions(self) -> None:
        model = {
            "limits": {"context_window": 8192, "max_output_tokens": 1},
            "interleaved": {"field": "reasoning_content"},
        }
        parsed = validate(providers_file(models={"ex/model-a": model}))
        assert parsed.resolve().model.interleaved is not None
