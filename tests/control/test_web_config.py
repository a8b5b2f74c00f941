"""config.yml's web section: hostile and mistaken values are refused with the field named."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bridge.control.config_file import ConfigFile


def _web(web: dict[str, Any], environ: dict[str, str] | None = None) -> ConfigFile:
    return ConfigFile.model_validate({"schema": 1, "web": web}, context={"environ": environ or {}})


def test_the_defaults_are_off_with_the_web_ports_and_no_exceptions() -> None:
    web = ConfigFile.model_validate({"schema": 1}).web
    assert web.enabled is False
    assert web.allow_ports == [80, 443] and web.allow_private_hosts == []
    assert web.search.backend == "none" and web.search.key is None


@pytest.mark.parametrize(
    ("web", "field", "said"),
    [
        ({"allow_ports": [0]}, "allow_ports", "not a TCP port"),
        ({"allow_ports": []}, "allow_ports", "at least 1"),
        ({"allow_private_hosts": ["not a host!"]}, "allow_private_hosts", "neither a host"),
        ({"allow_private_hosts": ["http://panel.lan"]}, "allow_private_hosts", "neither a host"),
        ({"max_bytes": 10}, "max_bytes", "greater than or equal"),
        ({"max_redirects": 50}, "max_redirects", "less than or equal"),
        ({"search": {"backend": "tavily"}}, "search", "needs api_key"),
        ({"search": {"backend": "searxng"}}, "search", "needs url"),
        ({"search": {"backend": "brave", "api_key": "BSA-literal-key"}}, "api_key", ".env"),
        ({"search": {"backend": "brave", "api_key": "${BRAVE_KEY}"}}, "api_key", "not set"),
        ({"search": {"backend": "searxng", "url": "ftp://x"}}, "url", "http"),
        ({"search": {"backend": "google"}}, "backend", "searxng"),
        ({"proxy": "socks5://p:1080"}, "proxy", "http:// proxy"),
        ({"proxy": "http://user:pw@p:3128"}, "proxy", "http:// proxy"),
        ({"proxies": "http://p:3128"}, "proxies", "Extra inputs"),
    ],
)
def test_a_bad_web_value_is_refused_naming_the_field(
    web: dict[str, Any], field: str, said: str
) -> None:
    with pytest.raises(ValidationError) as error:
        _web(web)
    text = str(error.value)
    assert field in text and said in text, text


def test_the_key_is_read_from_the_environment_and_hosts_and_networks_are_accepted() -> None:
    config = _web(
        {
            "enabled": True,
            "allow_private_hosts": ["panel.lan", "192.168.1.0/24", "fd00::/8", "[::1]"],
            "search": {"backend": "tavily", "api_key": "${TAVILY_API_KEY}"},
        },
        {"TAVILY_API_KEY": "tvly-0123456789abcdef"},
    )
    assert config.web.search.key == "tvly-0123456789abcdef"
    assert "tvly" not in repr(config.web.search)
