"""The provider client: one ``httpx.AsyncClient`` per provider, both protocols, retries.

``stream`` never raises for a provider fault: every stream ends with exactly one ``Completed``
or ``Failed`` event. A request is retried here only while nothing of its response stream has
been read; once bytes arrived, a broken stream fails this attempt and the turn engine decides
whether to spend another of the turn's attempts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

import httpx

from bridge.errors import ProviderError
from bridge.providers.compat import (
    COMPAT,
    CompatName,
    ServerCompat,
    compat_for_server_header,
    compat_for_url,
)
from bridge.providers.errors import (
    ProviderConnectError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderStreamError,
    ProviderTimeoutError,
    ProviderTransportError,
    clip,
)
from bridge.providers.events import Completed, Failed, StreamEvent, estimate_usage
from bridge.providers.failures import RETRYABLE_CLASSES, classify
from bridge.providers.headers import HeaderBuilder
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import ProviderRequest
from bridge.providers.protocols import protocol_for
from bridge.providers.retry import retry_delay
from bridge.providers.settings import ModelSettings, ProviderSettings
from bridge.redaction import Redactor
from bridge.tls_trust import context_for
from bridge.unicode_text import valid_text

# At most this much of an error body is read, and only to find the provider's error code.
MAX_ERROR_BODY_BYTES = 64 * 1024
# A response longer than this fails: a server that streams forever must not hold a turn, or
# the bridge's memory, without bound.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
# After the final event, at most this much (and this long) is read to keep the connection.
MAX_DRAIN_BYTES = 64 * 1024
DRAIN_TIMEOUT_S = 1.0
# A new request waits at most this long for the previous response's drain, so the pool can
# hand it the same connection; a server holding its body open only costs a new connection.
DRAIN_GRACE_S = 0.05
# Headers a server (or a relay) uses to ask for a pause; LiteLLM renames the upstream's.
RETRY_HEADERS = ("retry-after", "retry-after-ms", "llm_provider-retry-after")
# Event-stream lines start with one of these; a server labelling its stream text/plain still
# sends them first.
_SSE_STARTS = (b"data:", b"event:", b":", b"id:", b"retry:", b"data\n", b"data\r")


async def _read_bounded(response: httpx.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= MAX_ERROR_BODY_BYTES:
            break
    return b"".join(parts)[:MAX_ERROR_BODY_BYTES]


def _error_fields(body: bytes) -> tuple[str | None, str]:
    """The provider's error code and message from a JSON error body; never the body itself."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None, ""
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, str):
        return None, error  # clipped by the error, after the client redacted it
    if not isinstance(error, dict):
        return None, ""
    code = error.get("code") or error.get("type")
    message = error.get("message")
    return (str(code) if code is not None else None), (message if isinstance(message, str) else "")


def _body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as it arrives. Without a content encoding the raw chunks are the bytes, and
    skipping httpx's decoder layer saves a measurable share of CPU on long streams. A response
    built with its content already in memory (``httpx.MockTransport``) is read the usual way."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity") and not response.is_stream_consumed:
        return response.aiter_raw()
    return response.aiter_bytes()


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows the final event (usually only the end of the chunked body), so the
    connection goes back to the pool instead of being closed. Bounded in bytes and time: a
    server that lingers only costs its connection."""
    drained = 0
    try:
        async with asyncio.timeout(DRAIN_TIMEOUT_S):
            async for rest in chunks:
                drained += len(rest)
                if drained > MAX_DRAIN_BYTES:
                    return
    except (TimeoutError, httpx.HTTPError):
        return


async def _peek(chunks: AsyncIterator[bytes]) -> bytes:
    """The first bytes of the body: at least a few that are not blank, or all of a short body."""
    head = b""
    async for chunk in chunks:
        head += chunk
        if len(head.lstrip()) >= 8 or len(head) >= MAX_ERROR_BODY_BYTES:
            break
    return head


async def _replayed(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for chunk in rest:
        yield chunk


class _StatusWithRetryHeaders(ProviderStatusError):
    """A status error that keeps the server's ``retry-after`` headers for the backoff."""

    def __init__(self, status: int, code: str | None, message: str, headers: dict[str, str]):
        super().__init__(status, code, message)
        self.retry_headers = headers


def _translate(exc: httpx.HTTPError) -> ProviderTransportError:
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ProviderConnectError(f"bad provider URL: {type(exc).__name__}", retryable=False)
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeoutError(f"provider timed out ({type(exc).__name__})")
    if isinstance(exc, httpx.ConnectError):
        return ProviderConnectError("could not connect to the provider")
    return ProviderStreamError(f"connection to the provider broke ({type(exc).__name__})")


def _closed_before_answering(raw: Exception, response: httpx.Response | None) -> bool:
    """The connection closed before a status line came back: what a pooled connection does
    when the server closed it idle. A fresh connection that breaks the same way is one more
    ordinary failure (this is only ever forgiven once per request)."""
    return response is None and isinstance(raw, httpx.RemoteProtocolError)


class ProviderClient:
    """Talks to one provider. Use as ``async with`` or call ``aclose`` when done.

    transport: handed to httpx, so tests can use ``httpx.MockTransport``.
    sleep: how the client waits between retries; tests may record the delays instead.
    max_response_bytes: the longest response body accepted (default 32 MiB).
    redact: applied to every failure text before it is clipped (the control plane's redactor);
    by default the built-in rules and this provider's key and header values.
    """

    def __init__(
        self,
        settings: ProviderSettings,
        *,
        identity: IdentitySettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = settings
        self._made_with = (identity, transport, sleep, max_response_bytes, redact)
        self._max_response_bytes = max_response_bytes
        self._identity = identity or IdentitySettings()
        self._protocol = protocol_for(settings.api_type)
        self._headers = HeaderBuilder(settings)
        self._redact = redact or Redactor(secret_values=self._headers.secrets).redact_text
        self._url = settings.base_url.rstrip("/") + self._protocol.path
        self._sleep = sleep
        self._draining: set[asyncio.Task[None]] = set()
        # ``auto``: the family the URL names, later the one the server's header names.
        self._detected: CompatName | None = (
            compat_for_url(settings.base_url) if settings.compat == "auto" else None
        )
        self._empty_replay_content = False
        timeouts = settings.timeouts
        self._http = httpx.AsyncClient(
            transport=transport,
            verify=context_for(settings.base_url),
            timeout=httpx.Timeout(
                connect=timeouts.connect_s,
                read=timeouts.read_s,
                write=timeouts.read_s,
                pool=timeouts.connect_s,
            ),
            follow_redirects=False,
        )

    def twin(self) -> ProviderClient:
        """A client with this one's settings and its own connections, to use on another event
        loop (an httpx client belongs to the loop it first ran on)."""
        identity, transport, sleep, max_response_bytes, redact = self._made_with
        return ProviderClient(
            self.settings,
            identity=identity,
            transport=transport,
            sleep=sleep,
            max_response_bytes=max_response_bytes,
            redact=redact,
        )

    @property
    def user_agent(self) -> str:
        return self._headers.user_agent

    async def __aenter__(self) -> ProviderClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for task in list(self._draining):
            task.cancel()
        if self._draining:
            await asyncio.wait(self._draining)
        await self._http.aclose()

    @property
    def compat(self) -> ServerCompat:
        """The server family requests are shaped for: as configured, or what ``auto`` found."""
        if self.settings.compat != "auto":
            return COMPAT[self.settings.compat]
        found = COMPAT[self._detected or "auto"]
        if self._empty_replay_content and found.tool_replay_content != "empty":
            return dataclasses.replace(found, tool_replay_content="empty")
        return found

    def _learn_replay_content(self, error: ProviderTransportError, body: bytes) -> bool:
        """``auto``: a server that refused a request replaying ``content: null`` on a tool
        call (llama-cpp-python answers HTTP 500, it sends no header naming itself) is sent
        ``""`` from then on; True when that changes the next body."""
        if self.settings.compat != "auto" or self._empty_replay_content:
            return False
        if not isinstance(error, ProviderStatusError) or error.status not in (400, 422, 500):
            return False
        if b'"content": null' not in body or self.compat.tool_replay_content == "empty":
            return False
        self._empty_replay_content = True
        return True

    def _notice_server(self, response: httpx.Response) -> None:
        if self.settings.compat == "auto":
            found = compat_for_server_header(response.headers.get("server"))
            if found is not None:
                self._detected = found

    def _shaped(self, model: ModelSettings) -> ModelSettings:
        compat = self.compat
        return model if model.compat is compat else dataclasses.replace(model, compat=compat)

    def build_body(self, request: ProviderRequest, model: ModelSettings) -> dict[str, object]:
        """The JSON body ``stream`` would send, for inspection and tests."""
        return self._protocol.build_body(request, self._shaped(model), self._identity)

    def encoded_body(self, request: ProviderRequest, model: ModelSettings) -> bytes:
        """The body as sent: UTF-8 JSON. A lone surrogate in the history (text from a source
        that was not cleaned where it came in) becomes U+FFFD rather than an
        ``UnicodeEncodeError`` out of the client."""
        text = json.dumps(self.build_body(request, model), ensure_ascii=False)
        try:
            return text.encode()
        except UnicodeEncodeError:
            return valid_text(text).encode()

    async def stream(
        self, request: ProviderRequest, model: ModelSettings
    ) -> AsyncGenerator[StreamEvent, None]:
        """Send ``request`` and yield its events; the last one is ``Completed`` or ``Failed``.

        The final event is yielded as soon as the reader has it (``[DONE]``, a finish with its
        usage): what follows on the connection is read in the background, so a server that
        holds the body open costs nothing. Close the iterator (``contextlib.aclosing``) if you
        stop before the end."""
        try:
            body = self.encoded_body(request, model)
            headers = self._headers.build(request.session_id)
        except ProviderTransportError as exc:
            yield self._scrubbed(exc, retryable=False)
            return
        model = self._shaped(model)
        if self._draining:
            # A drain that is about to finish gives its connection back for this request.
            await asyncio.wait(self._draining, timeout=DRAIN_GRACE_S)
        policy = self.settings.retry
        attempt = 0
        reconnected = False
        while True:
            attempt += 1
            reader = self._protocol.new_reader(model)
            received = 0
            opening = bytearray()  # the first bytes, to tell an empty stream (comments only)
            response: httpx.Response | None = None
            handed_off = False
            try:
                response = await self._http.send(
                    self._http.build_request("POST", self._url, content=body, headers=headers),
                    stream=True,
                )
                chunks = await self._check_response(response)
                async for chunk in chunks:
                    received += len(chunk)
                    if len(opening) < EMPTY_STREAM_BYTES:
                        opening += chunk[: EMPTY_STREAM_BYTES - len(opening)]
                    if received > self._max_response_bytes:
                        raise ProviderStreamError(
                            f"response longer than {self._max_response_bytes} bytes"
                        )
                    events = reader.feed(chunk)
                    if reader.finished:
                        self._estimate_missing_usage(events, len(body))
                        self._drain_later(response, chunks)
                        handed_off = True
                        last = events[-1] if events else None
                        if isinstance(last, Failed) and last.error is not None:
                            events[-1] = self._scrubbed(last.error, retryable=last.retryable)
                        elif isinstance(last, Failed):
                            reason = clip(self._redact(last.reason))
                            events[-1] = dataclasses.replace(last, reason=reason)
                    for event in events:
                        yield event
                    if reader.finished:
                        return
                events = reader.close()
                self._estimate_missing_usage(events, len(body))
                for event in events:
                    yield event
                return
            except (httpx.HTTPError, ProviderTransportError) as raw:
                error = _translate(raw) if isinstance(raw, httpx.HTTPError) else raw
                empty = _empty_stream(response, received, opening) and _model_chooses(
                    request, model
                )
                if empty and self.compat.name == "llama-cpp-python":
                    # Deterministic (its tool choice runs at temperature 0): another attempt
                    # would be the same empty stream, and players would read "busy". The
                    # setting is the owner's to change (misconfigured: a fallback may answer).
                    yield Failed(reason=EMPTY_TOOL_STREAM, retryable=False, kind="misconfigured")
                    return
                note = EMPTY_STREAM_NOTE if empty else None
                failed = self._scrubbed(error, retryable=error.retryable, note=note)
                delay: float | None
                if received == 0 and self._learn_replay_content(error, body):
                    # The same request in the shape the server takes: not another attempt.
                    body, attempt, delay = self.encoded_body(request, model), attempt - 1, 0.0
                elif not reconnected and _closed_before_answering(raw, response):
                    # A kept-alive connection the server had closed as it was handed to us
                    # (llama-server does so now and then): the server never saw the request,
                    # so it is sent once more at once on a new connection, not as an attempt.
                    reconnected, attempt, delay = True, attempt - 1, 0.0
                else:
                    delay = None if received > 0 else retry_delay(policy, attempt, failed)
                if delay is None:
                    yield failed
                    return
            finally:
                if response is not None and not handed_off:
                    await response.aclose()
            await self._sleep(delay)

    @staticmethod
    def _estimate_missing_usage(events: list[StreamEvent], request_bytes: int) -> None:
        last = events[-1] if events else None
        if isinstance(last, Completed) and last.usage is None:
            usage = estimate_usage(request_bytes, last.items)
            events[-1] = dataclasses.replace(last, usage=usage)

    def _drain_later(self, response: httpx.Response, chunks: AsyncIterator[bytes]) -> None:
        async def drain() -> None:
            try:
                await _drain(chunks)
            finally:
                await response.aclose()

        task = asyncio.create_task(drain())
        self._draining.add(task)
        task.add_done_callback(self._draining.discard)

    def _scrubbed(
        self, error: ProviderError, *, retryable: bool, note: str | None = None
    ) -> Failed:
        """The failure with secrets cut out of its text: a provider may echo the key or a
        header back ("Incorrect API key: sk-..."), and the text reaches logs and players. The
        whole text is redacted first and clipped after, so no clip can leave half a key."""
        whole = self._redact(getattr(error, "unclipped", None) or str(error))
        text = clip(whole)
        error.args = (text,)
        if isinstance(error, ProviderTransportError):
            error.unclipped = whole
        reason = f"{text} ({note})" if note else text
        return Failed(reason=reason, retryable=retryable, error=error)

    async def _check_response(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """The body's chunks when the response is an event stream; raises for an error status
        or a body that is not a stream."""
        self._notice_server(response)
        status = response.status_code
        if status >= 300:
            code, message = _error_fields(await _read_bounded(response))
            retry_headers = {
                name: response.headers[name] for name in RETRY_HEADERS if name in response.headers
            }
            error = _StatusWithRetryHeaders(status, code, message, retry_headers)
            error.retryable = classify(status, code, message) in RETRYABLE_CLASSES
            raise error
        content_type = response.headers.get("content-type", "").strip().lower()
        chunks = _body_chunks(response)
        if content_type.startswith("text/plain"):
            # Some servers (older llama.cpp builds, proxies) label their event stream
            # text/plain: the first bytes tell a stream from an error page.
            head = await _peek(chunks)
            if head.lstrip().startswith(_SSE_STARTS):
                return _replayed(head, chunks)
            async for chunk in chunks:
                head += chunk
                if len(head) >= MAX_ERROR_BODY_BYTES:
                    break
            code, message = _error_fields(head[:MAX_ERROR_BODY_BYTES])
            if code or message:
                raise self._body_error(code, message)
            raise ProviderStreamError("expected an event stream, got text/plain", retryable=False)
        if content_type.startswith(("application/json", "text/html")):
            code, message = _error_fields(await _read_bounded(response))
            if code or message:
                raise self._body_error(code, message)
            raise ProviderStreamError(
                f"expected an event stream, got {clip(content_type, 60)}", retryable=False
            )
        return chunks

    @staticmethod
    def _body_error(code: str | None, message: str) -> ProviderResponseError:
        kind = classify(None, code, message) if code else "rejected"
        return ProviderResponseError(
            message or "provider error", code=code, retryable=kind in RETRYABLE_CLASSES
        )


EMPTY_STREAM_BYTES = 4096
EMPTY_TOOL_STREAM = (
    "llama-cpp-python cannot stream a tool call its model chose under tool_choice: auto (it "
    "answered an empty stream); set the model's request.tool_choice to a tool's name or omit"
)
EMPTY_STREAM_NOTE = (
    "an empty stream to a request offering tools under tool_choice: auto; llama-cpp-python "
    "answers so when its model picks a tool: set compat: llama-cpp-python and the model's "
    "request.tool_choice to a tool's name"
)


def _empty_stream(response: httpx.Response | None, received: int, opening: bytearray) -> bool:
    """A 200 event stream that ended (cleanly or cut) without one data line: llama-cpp-python's
    server raises "Automatic streaming tool choice is not supported" after sending its
    headers, so the body is empty (at most keep-alive comments)."""
    if response is None or response.status_code != 200 or received >= EMPTY_STREAM_BYTES:
        return False
    return not any(line.lstrip().startswith(b"data") for line in bytes(opening).splitlines())


def _model_chooses(request: ProviderRequest, model: ModelSettings) -> bool:
    """Tools are offered and the model itself picks whether to call one."""
    return bool(request.tools) and request.tool_choice == "auto" and model.tool_choice == "auto"
