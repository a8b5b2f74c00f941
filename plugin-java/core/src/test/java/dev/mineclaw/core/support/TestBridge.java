package dev.mineclaw.core.support;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mineclaw.core.link.Handshake;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.java_websocket.WebSocket;
import org.java_websocket.WebSocketImpl;
import org.java_websocket.enums.Opcode;
import org.java_websocket.handshake.ClientHandshake;
import org.java_websocket.server.WebSocketServer;

/**
 * A real WebSocket server on loopback standing in for the bridge: it issues a challenge, checks
 * the hello MAC like the bridge does, and hands every later frame to the test.
 */
public final class TestBridge extends WebSocketServer implements AutoCloseable {
    /** A frame the plugin sent, with the connection it came on. */
    public record Received(WebSocket connection, JsonObject frame) {}

    private static final long WAIT_SECONDS = 10;

    private final String token;
    private final CountDownLatch started = new CountDownLatch(1);
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> hellos = new LinkedBlockingQueue<>();
    private final BlockingQueue<Integer> closes = new LinkedBlockingQueue<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger sessions = new AtomicInteger();
    private final AtomicInteger helloCount = new AtomicInteger();
    /*
     * Java-WebSocket 1.5.7 can strand a frame sent from a thread other than its selector: a write
     * pass that has just found the queue empty resets the connection to read-only interest after
     * the sender asked for write interest, and the frame then waits for the next send. A lone
     * answer (the last of a bench, a hello.result) waited until the client timed out; that was the
     * testkit bench's 49 of 50 on CI. While a connection still holds queued data, this asks for
     * write interest again, so a stranded frame leaves within a tick.
     */
    private final ScheduledExecutorService flusher = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "test-bridge-flusher");
        thread.setDaemon(true);
        return thread;
    });
    private volatile String forward = "prefixed";
    /** A close code to refuse every proven hello with (4005: another bridge serves it), or 0. */
    private volatile int refuseWith;
    private volatile boolean muted;
    private volatile long refusalCloseDelayMs;
    private volatile BiConsumer<WebSocket, JsonObject> onFrame = (connection, frame) -> { };
    private volatile WebSocket latest;

    public TestBridge(String token) {
        super(new InetSocketAddress("127.0.0.1", 0));
        this.token = token;
        setReuseAddr(true);
    }

    /** Starts and waits until the port is bound. */
    public TestBridge begin() throws InterruptedException {
        start();
        if (!this.started.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test bridge did not start");
        }
        return this;
    }

    public URI url() {
        return URI.create("ws://127.0.0.1:" + getPort() + "/link");
    }

    public void onFrame(BiConsumer<WebSocket, JsonObject> handler) {
        this.onFrame = handler;
    }

    public void forwardAll() {
        this.forward = "all";
    }

    /** The next frame after the handshake, waiting a bounded time. */
    public Received next() throws InterruptedException {
        Received frame = this.received.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (frame == null) {
            throw new AssertionError("the plugin sent nothing within " + WAIT_SECONDS + " s");
        }
        return frame;
    }

    /** The next frame, or null if none comes within {@code millis}. */
    public Received poll(long millis) throws InterruptedException {
        return this.received.poll(millis, TimeUnit.MILLISECONDS);
    }

    /** The nonce of the next hello the plugin sent (valid or not). */
    public String nextHello() throws InterruptedException {
        String nonce = this.hellos.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (nonce == null) {
            throw new AssertionError("no hello within " + WAIT_SECONDS + " s");
        }
        return nonce;
    }

    /** The close code of the next connection that ended. */
    public int nextClose() throws InterruptedException {
        Integer code = this.closes.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (code == null) {
            throw new AssertionError("no connection closed within " + WAIT_SECONDS + " s");
        }
        return code;
    }

    public int connections() {
        return this.connections.get();
    }

    public WebSocket latest() {
        return this.latest;
    }

    /** Sends {@code text} split into fragments of {@code size} bytes (possibly inside a UTF-8 sequence). */
    public static void sendFragmented(WebSocket connection, String text, int size) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        for (int start = 0; start < bytes.length; start += size) {
            int end = Math.min(bytes.length, start + size);
            connection.sendFragmentedFrame(Opcode.TEXT, ByteBuffer.wrap(bytes, start, end - start), end == bytes.length);
        }
    }

    public static String frame(String id, String type, String re, JsonObject data) {
        JsonObject frame = new JsonObject();
        frame.addProperty("v", 1);
        frame.addProperty("id", id);
        frame.addProperty("type", type);
        if (re != null) {
            frame.addProperty("re", re);
        }
        frame.add("data", data);
        return frame.toString();
    }

    @Override
    public void onStart() {
        this.flusher.scheduleWithFixedDelay(this::flushStranded, 20, 20, TimeUnit.MILLISECONDS);
        this.started.countDown();
    }

    private void flushStranded() {
        for (WebSocket connection : getConnections()) {
            try {
                if (connection instanceof WebSocketImpl impl && impl.hasBufferedData()) {
                    onWriteDemand(connection);
                }
            } catch (RuntimeException exc) {
                // A connection closing under us; a thrown exception would end the schedule.
            }
        }
    }

    @Override
    public void onOpen(WebSocket connection, ClientHandshake handshake) {
        this.connections.incrementAndGet();
        this.latest = connection;
        String nonce = nonce();
        connection.setAttachment(nonce);
        JsonObject data = new JsonObject();
        data.addProperty("nonce", nonce);
        data.addProperty("protocol", 1);
        data.addProperty("bridge_version", "0.1.0");
        connection.send(frame("b-challenge", "hello.challenge", null, data));
    }

    @Override
    public void onMessage(WebSocket connection, String message) {
        JsonObject frame = JsonParser.parseString(message).getAsJsonObject();
        if ("hello".equals(frame.get("type").getAsString())) {
            hello(connection, frame);
            return;
        }
        this.received.add(new Received(connection, frame));
        this.onFrame.accept(connection, frame);
    }

    /**
     * From now on, answer no ping and send nothing: a paused bridge, whose TCP connection the
     * kernel keeps open.
     */
    public void mute() {
        this.muted = true;
    }

    @Override
    public void onWebsocketPing(WebSocket connection, org.java_websocket.framing.Framedata frame) {
        if (!this.muted) {
            super.onWebsocketPing(connection, frame);
        }
    }

    /** From now on, refuse each plugin that proves the token with {@code code}, as a bridge that does not
     * serve its server does (4005). */
    public void refuseWith(int code) {
        this.refuseWith = code;
    }

    /** Sends the close frame of a refusal this long after the error reply, as a busy bridge may. */
    public void delayRefusalClose(java.time.Duration delay) {
        this.refusalCloseDelayMs = delay.toMillis();
    }

    /** How many hellos arrived so far (proven or not). */
    public int hellosSeen() {
        return this.helloCount.get();
    }

    private void hello(WebSocket connection, JsonObject frame) {
        this.helloCount.incrementAndGet();
        JsonObject data = frame.getAsJsonObject("data");
        String nonce = data.get("nonce").getAsString();
        this.hellos.add(nonce);
        String expected = Handshake.mac(this.token, connection.getAttachment(), data.get("instance_id").getAsString());
        if (!nonce.equals(connection.getAttachment()) || !expected.equals(data.get("mac").getAsString())) {
            JsonObject error = new JsonObject();
            error.addProperty("code", "AUTH_FAILED");
            error.addProperty("message", "bad mac");
            connection.send(frame("b-auth", "error", frame.get("id").getAsString(), error));
            connection.close(4001, "authentication failed");
            return;
        }
        if (this.refuseWith != 0) {
            JsonObject error = new JsonObject();
            error.addProperty("code", "UNAVAILABLE");
            error.addProperty("message", "this bridge does not serve this server now; try the next bridge");
            connection.send(frame("b-auth", "error", frame.get("id").getAsString(), error));
            int code = this.refuseWith;
            long delay = this.refusalCloseDelayMs;
            if (delay > 0) {
                this.flusher.schedule(() -> connection.close(code, "UNAVAILABLE"), delay, TimeUnit.MILLISECONDS);
            } else {
                connection.close(code, "UNAVAILABLE");
            }
            return;
        }
        JsonObject result = new JsonObject();
        result.addProperty("bridge_version", "0.1.0");
        result.addProperty("session_id", "s" + this.sessions.incrementAndGet());
        connection.send(frame("b-hello", "hello.result", frame.get("id").getAsString(), result));
        JsonObject state = new JsonObject();
        state.addProperty("forward", this.forward);
        state.addProperty("public_prefix", "@ai");
        connection.send(frame("b-state", "link.state", null, state));
    }

    private static String nonce() {
        byte[] random = new byte[32];
        new java.security.SecureRandom().nextBytes(random);
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    }

    @Override
    public void onClose(WebSocket connection, int code, String reason, boolean remote) {
        this.closes.add(code);
    }

    @Override
    public void onMessage(WebSocket connection, ByteBuffer message) {
    }

    @Override
    public void onError(WebSocket connection, Exception exc) {
        // Shows up in the test output when a scripted handler throws.
        exc.printStackTrace();
    }

    // Not declared to throw InterruptedException: try-with-resources would then warn (-Xlint:try)
    // that closing may be interrupted; an interrupt is passed on instead.
    @Override
    public void close() {
        this.flusher.shutdownNow();
        try {
            stop(2000);
        } catch (InterruptedException exc) {
            Thread.currentThread().interrupt();
        }
    }
}
