"""The link protocol as a state machine with no I/O.

Feed it each received frame with ``receive``; collect what the application must learn with
``events_received`` and what must go on the wire with ``data_to_send``; when ``close_code`` is
set, send what is pending and close the connection with it. The asyncio server only moves text
between the socket and this object, so everything here is tested without sockets.

States: ``AWAITING_HELLO`` (the challenge is queued on construction) → ``OPEN`` after a good
``hello`` → ``CLOSED`` on a handshake failure, ``close`` or ``connection_lost``.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from bridge import __version__
from bridge.errors import LinkError
from bridge.link.auth import mac_matches, new_nonce
from bridge.link.codec import DecodeFault, Frame, decode_frame, encode_frame
from bridge.link.codes import LOCAL_ONLY_CODES, CloseCode, ErrorCode
from bridge.link.messages import (
    Direction,
    ErrorData,
    Hello,
    HelloChallenge,
    HelloResult,
    Kind,
    LinkState,
    WireModel,
    answer_type,
    message_type,
)

DEFAULT_SERVER_ID = "default"
"""The server a ``hello`` without ``server_id`` is: the one of ``link.token``."""
ASKS_FEATURE = "asks"
"""The plugin feature of questions with ids (since 1.5): every ``link.state`` to such a plugin
says ``asks``, the first one included (the plugin decides on it what to do with the questions
it kept)."""

TokenLookup = Callable[[str], str | None]
"""A server id to its token, ``None`` for an id the bridge does not know."""


def token_digest(token: str) -> bytes:
    """What a connection keeps of the token it proved (never the token itself)."""
    return hashlib.sha256(token.encode()).digest()


_FROM_PLUGIN = Direction.PLUGIN_TO_BRIDGE
_FROM_BRIDGE = Direction.BRIDGE_TO_PLUGIN


class State(Enum):
    AWAITING_HELLO = "awaiting_hello"
    OPEN = "open"
    CLOSED = "closed"


class NotOpenError(LinkError):
    """A frame was to be sent while the link is not open (before the handshake, or closed)."""


class FrameTooLargeError(LinkError):
    """A frame to be sent is larger than the peer accepts."""


# ---- events for the application


@dataclass(frozen=True, slots=True)
class HandshakeCompleted:
    hello: Hello
    session_id: str
    server_id: str = DEFAULT_SERVER_ID


@dataclass(frozen=True, slots=True)
class HandshakeFailed:
    """For the log: why the peer was turned away (never the token or the MAC)."""

    code: ErrorCode
    reason: str


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """The peer asks; answer with ``send_answer`` or ``send_error`` exactly once."""

    id: str
    type: str
    data: WireModel


@dataclass(frozen=True, slots=True)
class EventReceived:
    id: str
    type: str
    data: WireModel


@dataclass(frozen=True, slots=True)
class AnswerReceived:
    """The answer to our request ``re``."""

    re: str
    type: str
    data: WireModel


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """Our request ``re`` gets no answer: refused, answered badly, or the link dropped."""

    re: str
    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class PeerErrorReported:
    """An error frame that answers none of our requests in flight (for the log)."""

    re: str | None
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class FaultAnswered:
    """We answered a bad frame from the peer with an error frame (for the log)."""

    code: ErrorCode
    message: str
    re: str | None


Event = (
    HandshakeCompleted
    | HandshakeFailed
    | RequestReceived
    | EventReceived
    | AnswerReceived
    | RequestFailed
    | PeerErrorReported
    | FaultAnswered
)


class LinkProtocol:
    """The bridge's side of one plugin connection.

    Keyword settings: ``token`` the shared secret, or a lookup from server id to its token (a
    ``hello`` without ``server_id`` is ``DEFAULT_SERVER_ID``); ``link_state`` the first
    ``link.state`` sent after a good handshake, or a function of the server id; ``serves``
    whether this bridge serves a server now (one another bridge holds is refused with
    ``NOT_SERVED``, only after its MAC proved the plugin, so a stranger learns nothing from
    it); ``max_frame_bytes`` the largest frame the peer accepts (65536);
    ``max_requests_in_flight`` how many of the peer's requests may await an answer at once
    (256; more get ``UNAVAILABLE``). ``nonce`` and ``session_id`` are drawn at random unless given.
    """

    def __init__(
        self,
        *,
        token: str | TokenLookup,
        link_state: LinkState | Callable[[str], LinkState],
        serves: Callable[[str], bool] | None = None,
        max_frame_bytes: int = 65536,
        max_requests_in_flight: int = 256,
        bridge_version: str = __version__,
        nonce: str | None = None,
        session_id: str | None = None,
    ) -> None:
        self._tokens: TokenLookup = (
            (lambda server_id: token if server_id == DEFAULT_SERVER_ID else None)
            if isinstance(token, str)
            else token
        )
        self._link_state = link_state
        self._serves = serves
        self._max_frame_bytes = max_frame_bytes
        self._max_incoming = max_requests_in_flight
        self._bridge_version = bridge_version
        self._nonce: str | None = nonce or new_nonce()
        self._session_id = session_id or secrets.token_urlsafe(12)
        self._next_id = 0
        self._outgoing: dict[str, str] = {}  # our request id -> its type
        self._incoming: dict[str, str] = {}  # the peer's request id -> its type
        self._events: list[Event] = []
        self._to_send: list[str] = []
        self.state = State.AWAITING_HELLO
        self.close_code: CloseCode | None = None
        self.close_reason = ""
        self.hello: Hello | None = None
        self.server_id: str | None = None
        self.proven: bytes | None = None
        """A digest of the token this connection proved (`token_digest`; None before): the
        link stays only while its server's token in force is still that one."""
        """The authenticated server's id (``DEFAULT_SERVER_ID`` when the hello named none)."""
        challenge = HelloChallenge(nonce=self._nonce, protocol=1, bridge_version=bridge_version)
        self._queue(self._new_id(), "hello.challenge", challenge)

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def requests_in_flight(self) -> frozenset[str]:
        """Ids of our requests still awaiting an answer."""
        return frozenset(self._outgoing)

    # ---- reading

    def receive(self, raw: str | bytes) -> None:
        """Process one frame received from the plugin."""
        if self.state is State.CLOSED:
            return
        decoded = decode_frame(raw, _FROM_PLUGIN)
        if self.state is State.AWAITING_HELLO:
            self._receive_hello(decoded)
        elif isinstance(decoded, DecodeFault):
            self._receive_fault(decoded)
        else:
            self._receive_frame(decoded)

    def events_received(self) -> list[Event]:
        """The events since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    @property
    def has_data_to_send(self) -> bool:
        """Whether ``data_to_send`` or a close is waiting (a request alone sends nothing)."""
        return bool(self._to_send) or self.close_code is not None

    def data_to_send(self) -> list[str]:
        """The frames to write since the last call, in order."""
        frames, self._to_send = self._to_send, []
        return frames

    def _receive_hello(self, decoded: Frame | DecodeFault) -> None:
        if isinstance(decoded, DecodeFault):
            close = (
                CloseCode.UNSUPPORTED_VERSION
                if decoded.code is ErrorCode.UNSUPPORTED_VERSION
                else CloseCode.HANDSHAKE_FAILED
            )
            self._refuse_handshake(decoded.code, decoded.message, decoded.frame_id, close)
            return
        if decoded.type != "hello":
            message = f"{decoded.type!r} before the handshake; send hello first"
            self._refuse_handshake(
                ErrorCode.NOT_READY, message, decoded.id, CloseCode.HANDSHAKE_FAILED
            )
            return
        hello = decoded.data
        assert isinstance(hello, Hello)
        issued, self._nonce = self._nonce, None  # each nonce is good for one attempt
        if hello.protocol.major != 1:
            version = f"{hello.protocol.major}.{hello.protocol.minor}"
            message = f"protocol {version} is not supported; this bridge speaks 1"
            self._refuse_handshake(
                ErrorCode.UNSUPPORTED_VERSION, message, decoded.id, CloseCode.UNSUPPORTED_VERSION
            )
        elif issued is None or hello.nonce != issued:
            self._refuse_handshake(
                ErrorCode.AUTH_FAILED,
                "authentication failed",
                decoded.id,
                CloseCode.AUTH_FAILED,
                log_reason="the nonce is not the one issued on this connection (replayed?)",
            )
        else:
            self._authenticate(hello, issued, decoded.id)

    def _authenticate(self, hello: Hello, nonce: str, re: str) -> None:
        server_id = hello.server_id or DEFAULT_SERVER_ID
        token = self._tokens(server_id)
        # Unknown id and wrong MAC look the same on the wire: an id is not a secret, but a
        # stranger probing ids should learn nothing; the log tells the owner which it was.
        if token is None:
            reason = f"server id {server_id!r} is not in servers.yml"
        elif not mac_matches(token, nonce, hello.instance_id, hello.mac, hello.server_id):
            reason = f"the MAC does not match the token of server {server_id!r}"
        elif self._serves is not None and not self._serves(server_id):
            self._refuse_handshake(
                ErrorCode.UNAVAILABLE,
                f"this bridge does not serve server {server_id!r} now; try the next bridge",
                re,
                CloseCode.NOT_SERVED,
            )
            return
        else:
            self.state = State.OPEN
            self.hello = hello
            self.server_id = server_id
            self.proven = token_digest(token)
            state = self._link_state
            result = HelloResult(bridge_version=self._bridge_version, session_id=self._session_id)
            self._queue(self._new_id(), "hello.result", result, re=re)
            first_state = state if isinstance(state, LinkState) else state(server_id)
            if ASKS_FEATURE in hello.features and first_state.asks is None:
                # The plugin decides what to do with the questions it kept on this first
                # state: it must already say that this bridge takes their ids.
                first_state = first_state.model_copy(update={"asks": True})
            self._queue(self._new_id(), "link.state", first_state)
            self._events.append(HandshakeCompleted(hello, self._session_id, server_id))
            return
        self._refuse_handshake(
            ErrorCode.AUTH_FAILED,
            "authentication failed",
            re,
            CloseCode.AUTH_FAILED,
            log_reason=reason,
        )

    def _refuse_handshake(
        self,
        code: ErrorCode,
        message: str,
        re: str | None,
        close: CloseCode,
        *,
        log_reason: str | None = None,
    ) -> None:
        self._queue_error(code, message, re)
        self._events.append(HandshakeFailed(code, log_reason or message))
        self._begin_close(close, code.value)

    def _receive_fault(self, fault: DecodeFault) -> None:
        if fault.re is not None and fault.type == f"{self._outgoing.get(fault.re)}.result":
            del self._outgoing[fault.re]
            self._events.append(RequestFailed(fault.re, fault.code, fault.message))
        if fault.type == "error":  # errors are never answered, even malformed ones
            self._events.append(PeerErrorReported(fault.re, fault.code.value, fault.message))
            return
        self._answer_fault(fault.code, fault.message, fault.frame_id)

    def _receive_frame(self, frame: Frame) -> None:
        if frame.kind is Kind.REQUEST:
            if frame.type == "hello":
                self._answer_fault(ErrorCode.UNAVAILABLE, "the handshake is already done", frame.id)
            elif frame.id in self._incoming:
                message = f"id {frame.id!r} is already used by a request in flight"
                self._answer_fault(ErrorCode.DUPLICATE_ID, message, frame.id)
            elif len(self._incoming) >= self._max_incoming:
                message = f"more than {self._max_incoming} requests in flight"
                self._answer_fault(ErrorCode.UNAVAILABLE, message, frame.id)
            else:
                self._incoming[frame.id] = frame.type
                self._events.append(RequestReceived(frame.id, frame.type, frame.data))
        elif frame.kind is Kind.EVENT:
            self._events.append(EventReceived(frame.id, frame.type, frame.data))
        elif frame.kind is Kind.ANSWER:
            assert frame.re is not None
            if frame.type == f"{self._outgoing.get(frame.re)}.result":
                del self._outgoing[frame.re]
                self._events.append(AnswerReceived(frame.re, frame.type, frame.data))
            else:
                message = f"{frame.type} re {frame.re!r} answers no request in flight"
                self._answer_fault(ErrorCode.UNEXPECTED_ANSWER, message, frame.id)
        else:
            error = frame.data
            assert isinstance(error, ErrorData)
            if frame.re is not None and frame.re in self._outgoing:
                del self._outgoing[frame.re]
                self._events.append(RequestFailed(frame.re, ErrorCode(error.code), error.message))
            else:
                self._events.append(PeerErrorReported(frame.re, error.code, error.message))

    def _answer_fault(self, code: ErrorCode, message: str, re: str | None) -> None:
        self._queue_error(code, message, re)
        self._events.append(FaultAnswered(code, message, re))

    # ---- writing

    def send_request(self, name: str, data: WireModel) -> str:
        """Queue a request to the plugin; returns its id, which its answer will carry as ``re``."""
        self._check_sendable(name, Kind.REQUEST, data)
        request_id = self._new_id()
        self._queue(request_id, name, data)
        self._outgoing[request_id] = name
        return request_id

    def send_event(self, name: str, data: WireModel) -> None:
        """Queue an event to the plugin."""
        self._check_sendable(name, Kind.EVENT, data)
        self._queue(self._new_id(), name, data)

    def send_answer(self, re: str, data: WireModel) -> None:
        """Answer the plugin's request ``re``; raises if it is not awaiting an answer."""
        request = self._pending_incoming(re)
        spec = answer_type(_FROM_PLUGIN, request)
        if not isinstance(data, spec.data):
            raise LinkError(
                f"{request} is answered with {spec.data.__name__}, not {type(data).__name__}"
            )
        self._queue(self._new_id(), spec.name, data, re=re)
        del self._incoming[re]

    def send_error(self, re: str, code: ErrorCode, message: str) -> None:
        """Answer the plugin's request ``re`` with an error frame."""
        self._pending_incoming(re)
        self._queue_error(code, message, re)
        del self._incoming[re]

    def forget_request(self, request_id: str) -> bool:
        """Stop waiting for our request (it timed out); a late answer is then unexpected."""
        return self._outgoing.pop(request_id, None) is not None

    def close(self, code: CloseCode = CloseCode.NORMAL, reason: str = "") -> None:
        """Start closing: fails our requests in flight with ``DISCONNECTED``."""
        if self.state is not State.CLOSED:
            self._begin_close(code, reason)

    def connection_lost(self) -> None:
        """The socket is gone: every request in flight fails with ``DISCONNECTED``."""
        self.state = State.CLOSED
        self._fail_outgoing()
        self._incoming.clear()

    def _begin_close(self, code: CloseCode, reason: str) -> None:
        self.state = State.CLOSED
        self.close_code = code
        self.close_reason = reason
        self._fail_outgoing()

    def _fail_outgoing(self) -> None:
        for request_id in list(self._outgoing):
            self._events.append(
                RequestFailed(request_id, ErrorCode.DISCONNECTED, "the link closed")
            )
        self._outgoing.clear()

    def _pending_incoming(self, re: str) -> str:
        if self.state is not State.OPEN:
            raise NotOpenError("the link is not open")
        request = self._incoming.get(re)
        if request is None:
            raise LinkError(f"no request {re!r} awaits an answer")
        return request

    def _check_sendable(self, name: str, kind: Kind, data: WireModel) -> None:
        if self.state is not State.OPEN:
            raise NotOpenError("the link is not open")
        spec = message_type(_FROM_BRIDGE, name)
        if spec is None or spec.kind is not kind:
            raise LinkError(f"{name!r} is not a {kind} the bridge sends")
        if not isinstance(data, spec.data):
            raise LinkError(f"{name} carries {spec.data.__name__}, not {type(data).__name__}")

    def _queue_error(self, code: ErrorCode, message: str, re: str | None) -> None:
        if code in LOCAL_ONLY_CODES:
            raise LinkError(f"{code} is local only and never sent")
        error = ErrorData.model_validate({"code": code.value, "message": message[:512]})
        self._queue(self._new_id(), "error", error, re=re)

    def _queue(self, frame_id: str, name: str, data: WireModel, *, re: str | None = None) -> None:
        text = encode_frame(id=frame_id, type=name, data=data, re=re)
        size = len(text.encode())  # models refuse unpaired surrogates, so this always encodes
        if size > self._max_frame_bytes:
            cap = self._max_frame_bytes
            raise FrameTooLargeError(f"a {name} frame of {size} bytes is over the {cap}-byte cap")
        self._to_send.append(text)

    def _new_id(self) -> str:
        self._next_id += 1
        return f"b-{self._next_id}"
