package dev.mineclaw.core.link;

import com.google.gson.JsonObject;
import dev.mineclaw.core.MineclawException;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.wire.Direction;
import dev.mineclaw.core.wire.ErrorCode;
import dev.mineclaw.core.wire.Frame;
import dev.mineclaw.core.wire.FrameCodec;
import dev.mineclaw.core.wire.MessageTypes;
import dev.mineclaw.core.wire.WireException;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;

/**
 * One WebSocket connection to the bridge: the handshake, reassembly of partial messages, flow
 * control (one message requested at a time), and the requests in flight on it. When it ends,
 * everything in flight fails with {@code DISCONNECTED} and the client decides about reconnecting.
 */
final class LinkSession implements WebSocket.Listener {
    /** How long a refused hello waits for the bridge's close frame before the socket is cut. */
    private static final long HANDSHAKE_CLOSE_GRACE_MS = 1000;

    private volatile int closeCode = -1;

    /** Given up for its silence or a handshake that never ended (see {@link #endedSilent}). */

    private volatile boolean silent;
    /** Why the bridge refused the hello, while its close frame is awaited. */
    private volatile String refusal;
    private enum Phase {
        AWAITING_CHALLENGE,
        HELLO_SENT,
        UP,
        ENDED
    }

    private final LinkClient client;
    private final long number;
    private final FrameCodec codec = new FrameCodec();
    private final PendingRequests pending = new PendingRequests();
    private final Set<String> answering = ConcurrentHashMap.newKeySet();
    private final AtomicLong nextId = new AtomicLong();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final StringBuilder partial = new StringBuilder();
    private final CompletableFuture<Void> socketClosed = new CompletableFuture<>();
    private volatile Phase phase = Phase.AWAITING_CHALLENGE;
    private volatile WebSocket socket;
    private volatile SendQueue sends;
    /** When anything (a frame, a pong) last came from the bridge, by {@link System#nanoTime()}. */
    private volatile long lastHeard;
    private volatile ScheduledFuture<?> liveness;

    LinkSession(LinkClient client, long number) {
        this.client = client;
        this.number = number;
    }

    boolean isUp() {
        return this.phase == Phase.UP;
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        if (this.ended.get()) {
            // Closed while connecting: nobody will use this socket.
            webSocket.abort();
            return;
        }
        this.socket = webSocket;
        this.sends = new SendQueue(webSocket, error -> end("send failed: " + error.getMessage(), true));
        this.lastHeard = System.nanoTime();
        try {
            long every = this.client.settings().pingInterval().toMillis();
            this.liveness = this.client.scheduler().scheduleAtFixedRate(this::checkLiveness, every, every,
                    TimeUnit.MILLISECONDS);
            this.client.scheduler().schedule(() -> {
                if (this.phase != Phase.UP && this.phase != Phase.ENDED) {
                    this.silent = true;
                    end("handshake timed out", true);
                }
            }, this.client.settings().handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException exc) {
            end("the link is closed", true);
            return;
        }
        webSocket.request(1);
    }

    /**
     * A paused or hung bridge keeps its TCP connection open and never closes it: only its silence
     * tells. Every ping interval this pings, and a bridge that sent nothing for the silence
     * timeout, not even a pong, is given up (the socket is cut, the next bridge tried at once).
     */
    private void checkLiveness() {
        long silentMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - this.lastHeard);
        long limit = this.client.settings().silenceTimeout().toMillis();
        if (silentMs >= limit) {
            this.silent = true;
            end("the bridge sent nothing for " + silentMs + " ms (link-timeout-ms " + limit + ")", true);
            return;
        }
        WebSocket current = this.socket;
        if (current == null || this.phase == Phase.ENDED) {
            return;
        }
        try {
            current.sendPing(ByteBuffer.allocate(0));
        } catch (IllegalStateException exc) {
            // The previous ping is still unsent (a full socket): the silence limit decides.
        }
    }

    @Override
    public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
        this.lastHeard = System.nanoTime();
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
        this.lastHeard = System.nanoTime();
        webSocket.request(1);  // the JDK answers the ping itself
        return null;
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        this.lastHeard = System.nanoTime();
        this.partial.append(data);
        if (this.partial.length() > this.client.settings().maxFrameBytes()) {
            this.partial.setLength(0);
            webSocket.sendClose(1009, "frame too large");
            end("the bridge sent a frame over " + this.client.settings().maxFrameBytes() + " characters", true);
            return null;
        }
        if (last) {
            String text = this.partial.toString();
            this.partial.setLength(0);
            try {
                receive(text);
            } catch (RuntimeException exc) {
                // A bug in a handler must not kill the connection's receive loop.
                this.client.logger().log(Level.SEVERE, "link: failed to handle a frame", exc);
            }
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        if (last) {
            sendFrame(FrameCodec.error(newId(), null, ErrorCode.MALFORMED_FRAME, "binary frames are not part of the protocol"));
        }
        webSocket.request(1);
        return null;
    }

    /** The close code the bridge sent, or -1 while open or when the socket failed without one. */
    int closeCode() {
        return this.closeCode;
    }

    /** Whether this connection was given up because its bridge went silent (paused, hung). */
    boolean endedSilent() {
        return this.silent;
    }

    /** The opening handshake timed out: the bridge took the connection and never answered. */
    void markSilent() {
        this.silent = true;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        this.closeCode = statusCode;
        this.socketClosed.complete(null);
        String closed = "closed by the bridge (" + statusCode + (reason.isEmpty() ? "" : " " + reason) + ")";
        String refused = this.refusal;
        end(refused == null ? closed : "handshake failed: " + refused + "; " + closed, false);
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        this.socketClosed.complete(null);
        end("connection error: " + error, false);
    }

    /** Sends a request on this connection; see {@link BridgeLink#request}. */
    CompletableFuture<JsonObject> request(String type, JsonObject data, Duration timeout) {
        CompletableFuture<JsonObject> answer = new CompletableFuture<>();
        String id = newId();
        Frame frame = new Frame(id, type, null, data);
        try {
            this.codec.check(frame, Direction.PLUGIN_TO_BRIDGE);
        } catch (WireException exc) {
            answer.completeExceptionally(exc);
            return answer;
        }
        PendingRequests.Pending entry = new PendingRequests.Pending(type, answer);
        if (!this.pending.add(id, entry)) {
            answer.completeExceptionally(LinkException.disconnected("the link went down"));
            return answer;
        }
        try {
            entry.attachTimer(this.client.scheduler().schedule(() -> {
                if (this.pending.expire(id,
                        LinkException.timeout(type + " got no answer in " + timeout.toMillis() + " ms"))
                        && "chat".equals(type)) {
                    // The chat was treated as unanswered (passed, or a wake cancelled with the
                    // offline line): the bridge must not answer it now with a late verdict.
                    JsonObject expired = new JsonObject();
                    expired.addProperty("request", id);
                    event(MessageTypes.CHAT_EXPIRED, expired);
                }
            }, timeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (RejectedExecutionException exc) {
            this.pending.take(id);
            answer.completeExceptionally(LinkException.disconnected("the link is closed"));
            return answer;
        }
        if (!sendFrame(frame)) {
            this.pending.take(id);
            answer.completeExceptionally(this.phase == Phase.ENDED ? LinkException.disconnected("the link went down")
                    : new LinkException(ErrorCode.INVALID_DATA, type + " is larger than a frame may be", false));
        }
        return answer;
    }

    /** Sends an event; false if the connection cannot take it. */
    boolean event(String type, JsonObject data) {
        Frame frame = new Frame(newId(), type, null, data);
        try {
            this.codec.check(frame, Direction.PLUGIN_TO_BRIDGE);
        } catch (WireException exc) {
            this.client.logger().warning("link: not sending " + frame + ": " + exc.getMessage());
            return false;
        }
        return sendFrame(frame);
    }

    /**
     * Closes the connection normally (1000); everything in flight fails at once. The future
     * completes when the socket is closed, by the bridge's answer or, a second later, by force.
     */
    CompletableFuture<Void> close(String reason) {
        end(reason, false);
        WebSocket current = this.socket;
        if (current == null) {
            return CompletableFuture.completedFuture(null);
        }
        // The bridge answers the close frame and the JDK then drops the connection; aborting at
        // once could reach the bridge before the close frame does (1006 instead of 1000).
        Runnable abortIfOpen = () -> {
            if (!current.isInputClosed()) {
                current.abort();
            }
            this.socketClosed.complete(null);
        };
        try {
            current.sendClose(WebSocket.NORMAL_CLOSURE, "");
        } catch (RuntimeException exc) {
            abortIfOpen.run();
            return this.socketClosed;
        }
        CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(abortIfOpen);
        return this.socketClosed;
    }

    private void receive(String text) {
        Frame frame;
        try {
            frame = this.codec.decode(text, Direction.BRIDGE_TO_PLUGIN);
        } catch (WireException exc) {
            this.client.logger().warning("link: refused a frame from the bridge: " + exc.getMessage());
            if (!exc.fromErrorFrame()) {
                sendFrame(FrameCodec.error(newId(), exc.offendingId(), exc.code(), exc.detail()));
            }
            failAnswered(exc);
            return;
        }
        if (frame.isAnswer()) {
            answer(frame);
        } else if (MessageTypes.kindOf(frame.type(), Direction.BRIDGE_TO_PLUGIN) == MessageTypes.Kind.REQUEST) {
            serve(frame);
        } else {
            event(frame);
        }
    }

    /** A broken answer still ends the request it names, rather than leaving it to time out. */
    private void failAnswered(WireException exc) {
        if (exc.answeredId() == null) {
            return;
        }
        PendingRequests.Pending request = this.pending.takeIf(exc.answeredId(), type -> true);
        if (request != null) {
            request.answer().completeExceptionally(
                    new LinkException(exc.code(), "the bridge's answer was invalid: " + exc.detail(), false));
        }
    }

    private void answer(Frame frame) {
        if (frame.re() == null) {
            this.client.logger().warning("link: the bridge reported " + frame.data());
            return;
        }
        boolean isError = MessageTypes.ERROR.equals(frame.type());
        // An error may answer any request; a result only a request of its own type.
        PendingRequests.Pending request = this.pending.takeIf(frame.re(),
                pendingType -> isError || frame.type().equals(pendingType + MessageTypes.RESULT_SUFFIX));
        if (request == null) {
            if (this.pending.wasExpired(frame.re())) {
                return;
            }
            if (isError) {
                this.client.logger().warning("link: the bridge reported an error about '" + frame.re() + "': "
                        + frame.data());
            } else {
                sendFrame(FrameCodec.error(newId(), frame.id(), ErrorCode.UNEXPECTED_ANSWER,
                        "no " + frame.type().substring(0, frame.type().length() - MessageTypes.RESULT_SUFFIX.length())
                                + " request '" + frame.re() + "' is in flight"));
            }
            return;
        }
        if (isError) {
            ErrorCode code = ErrorCode.fromWire(frame.data().get("code").getAsString());
            request.answer().completeExceptionally(
                    new LinkException(code, frame.data().get("message").getAsString(), true));
        } else {
            request.answer().complete(frame.data());
        }
    }

    private void event(Frame frame) {
        switch (frame.type()) {
            case "hello.challenge" -> challenged(frame.data());
            case "link.state" -> {
                JsonObject data = frame.data();
                List<String> tiers = new ArrayList<>();
                if (data.has("budget_tiers")) {
                    data.getAsJsonArray("budget_tiers").forEach(tier -> tiers.add(tier.getAsString()));
                }
                List<String> nodes = new ArrayList<>();
                if (data.has("report_nodes")) {
                    data.getAsJsonArray("report_nodes").forEach(node -> nodes.add(node.getAsString()));
                }
                this.client.listener().linkState(new LinkState("all".equals(data.get("forward").getAsString()),
                        data.get("public_prefix").getAsString(), tiers, nodes,
                        data.has("asks") && data.get("asks").getAsBoolean()));
            }
            default -> {
                if (this.phase != Phase.UP) {
                    this.client.logger().warning("link: dropped " + frame.type() + " before the handshake completed");
                    return;
                }
                Handlers.Event handler = this.client.eventHandler(frame.type());
                if (handler == null) {
                    this.client.logger().warning("link: no handler for event " + frame.type());
                } else {
                    handler.handle(frame.data());
                }
            }
        }
    }

    private void challenged(JsonObject data) {
        if (this.phase != Phase.AWAITING_CHALLENGE) {
            this.client.logger().warning("link: ignored a second hello.challenge");
            return;
        }
        this.phase = Phase.HELLO_SENT;
        JsonObject hello;
        try {
            String token = this.client.tokens().token();
            hello = Handshake.helloData(this.client.identity(), token, data.get("nonce").getAsString());
        } catch (MineclawException exc) {
            close("cannot answer the challenge: " + exc.getMessage());
            return;
        }
        request("hello", hello, this.client.settings().handshakeTimeout()).whenComplete((result, error) -> {
            if (error != null) {
                // A bridge that refuses the hello answers with an error and then closes with its
                // code (4001, 4005): wait a moment for that close frame, so its code steers the
                // next attempt and the bridge sees a clean close, not 1006 from an abort that
                // raced it. A bridge that sent nothing is cut off after the same moment.
                this.refusal = describe(error);
                CompletableFuture.delayedExecutor(HANDSHAKE_CLOSE_GRACE_MS, TimeUnit.MILLISECONDS)
                        .execute(() -> end("handshake failed: " + this.refusal, true));
                return;
            }
            synchronized (this.ended) {
                if (this.ended.get()) {
                    return;
                }
                this.phase = Phase.UP;
            }
            this.client.sessionUp(this, result.get("session_id").getAsString());
        });
    }

    private void serve(Frame frame) {
        if (this.phase != Phase.UP) {
            sendFrame(FrameCodec.error(newId(), frame.id(), ErrorCode.NOT_READY, "the handshake has not completed"));
            return;
        }
        if (!this.answering.add(frame.id())) {
            sendFrame(FrameCodec.error(newId(), frame.id(), ErrorCode.DUPLICATE_ID,
                    "request id '" + frame.id() + "' is already in flight"));
            return;
        }
        Handlers.Request handler = this.client.requestHandler(frame.type());
        CompletableFuture<JsonObject> result;
        if (handler == null) {
            result = CompletableFuture.failedFuture(
                    new LinkException(ErrorCode.UNAVAILABLE, "this plugin does not serve " + frame.type(), false));
        } else {
            try {
                result = handler.handle(frame.data());
            } catch (RuntimeException exc) {
                result = CompletableFuture.failedFuture(exc);
            }
        }
        result.whenComplete((data, error) -> {
            this.answering.remove(frame.id());
            if (error == null) {
                reply(frame, data);
            } else {
                replyError(frame, error);
            }
        });
    }

    private void reply(Frame request, JsonObject data) {
        Frame answer = new Frame(newId(), request.type() + MessageTypes.RESULT_SUFFIX, request.id(), data);
        try {
            this.codec.check(answer, Direction.PLUGIN_TO_BRIDGE);
        } catch (WireException exc) {
            replyError(request, exc);
            return;
        }
        if (!sendFrame(answer) && this.phase != Phase.ENDED) {
            replyError(request, new LinkException(ErrorCode.UNAVAILABLE,
                    "the answer to " + request.type() + " is larger than a frame may be", false));
        }
    }

    private void replyError(Frame request, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        ErrorCode code;
        String message;
        if (cause instanceof LinkException link && link.code().sendable()) {
            code = link.code();
            message = link.getMessage();
        } else if (cause instanceof PlayerGoneException gone) {
            code = ErrorCode.PLAYER_OFFLINE;
            message = gone.getMessage();
        } else if (cause instanceof TimeoutException) {
            code = ErrorCode.UNAVAILABLE;
            message = "the server did not get to " + request.type() + " in time";
        } else {
            this.client.logger().log(Level.WARNING, "link: handler for " + request.type() + " failed", cause);
            code = ErrorCode.INTERNAL;
            message = "the plugin failed to handle " + request.type();
        }
        sendFrame(FrameCodec.error(newId(), request.id(), code, message));
    }

    /** Queues a frame; false if the connection ended or the frame is over the cap (not sent). */
    private boolean sendFrame(Frame frame) {
        SendQueue queue = this.sends;
        if (queue == null || this.phase == Phase.ENDED) {
            return false;
        }
        String text = this.codec.encode(frame);
        int cap = this.client.settings().maxFrameBytes();
        // The peer closes the link on an oversized frame, so one is never sent (bytes, as it counts).
        if (text.length() > cap / 4 && text.getBytes(StandardCharsets.UTF_8).length > cap) {
            this.client.logger().warning("link: not sending " + frame + ": over the " + cap + "-byte frame cap");
            return false;
        }
        return queue.send(text);
    }

    private void end(String reason, boolean abort) {
        synchronized (this.ended) {
            if (!this.ended.compareAndSet(false, true)) {
                return;
            }
            this.phase = Phase.ENDED;
        }
        ScheduledFuture<?> watch = this.liveness;
        if (watch != null) {
            watch.cancel(false);
        }
        this.pending.closeAll(LinkException.disconnected("the link went down: " + reason));
        WebSocket current = this.socket;
        if (abort && current != null) {
            current.abort();
        }
        this.client.sessionEnded(this, reason, current != null);
    }

    private String newId() {
        return "p" + this.number + "-" + this.nextId.incrementAndGet();
    }

    private static String describe(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause.getMessage();
    }
}
