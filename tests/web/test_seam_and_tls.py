"""The test network seam refuses a bad file clearly, and TLS uses the name while the socket goes
to the checked address."""

from __future__ import annotations

from ipaddress import ip_address
from pathlib import Path

import httpcore
import pytest

from bridge.errors import ConfigError
from bridge.web.errors import FetchFailed
from bridge.web.fetch import FetchSettings, WebFetcher
from bridge.web.ranges import IPAddress
from bridge.web.seam import ENV_VAR, TestNetwork
from tests.web.network import PUBLIC_A, ScriptedNetwork
from tests.web.site import LoopbackSite


@pytest.mark.parametrize("text", ["not json", '{"hosts": ["a"]}', '{"routes": 5}', '["hosts"]'])
def test_a_bad_test_network_file_is_a_config_error_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "network.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        TestNetwork.from_environ({ENV_VAR: str(path)})
    assert ENV_VAR in str(error.value) and str(path) in str(error.value)


def test_without_the_variable_there_is_no_test_network() -> None:
    assert TestNetwork.from_environ({}) is None


async def test_the_test_network_routes_only_to_loopback() -> None:
    network = TestNetwork({"wiki.example": (PUBLIC_A,)}, {f"{PUBLIC_A}:80": "10.0.0.1:80"})
    assert await network.resolve("wiki.example", 80) == [PUBLIC_A]
    with pytest.raises(httpcore.ConnectError):
        await network.resolve("other.example", 80)
    with pytest.raises(httpcore.ConnectError, match="loopback only"):
        await network.dial(ip_address(PUBLIC_A), 80, 1.0)


class RecordingStream(httpcore.AsyncNetworkStream):
    """A real stream that notes the name TLS was started with."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, names: list[str | None]) -> None:
        self._inner = inner
        self._names = names

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: object, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        self._names.append(server_hostname)
        return await self._inner.start_tls(ssl_context, server_hostname, timeout)  # type: ignore[arg-type]


async def test_tls_is_started_with_the_name_on_the_checked_address() -> None:
    """https to a name: the socket goes to the address the shield admitted and TLS (SNI and the
    certificate check) uses the name. The loopback server speaks plain HTTP, so the handshake
    fails after the name was sent, which is all this test needs."""
    names: list[str | None] = []
    async with LoopbackSite() as site:
        network = ScriptedNetwork()
        network.name("wiki.example", [PUBLIC_A])
        network.route(PUBLIC_A, site.port, port=443)

        async def dial(
            address: IPAddress, port: int, timeout: float | None
        ) -> httpcore.AsyncNetworkStream:
            return RecordingStream(await network.dial(address, port, timeout), names)

        fetcher = WebFetcher(FetchSettings(), resolver=network.resolve, dialer=dial)
        with pytest.raises(FetchFailed):
            await fetcher.fetch("https://wiki.example/")
    assert network.dials == [(PUBLIC_A, 443)]
    assert names == ["wiki.example"]
