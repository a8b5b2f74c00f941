package dev.mineclaw.core.link;

import com.google.gson.JsonObject;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The plugin's end of the link: a WebSocket client (the JDK's {@code java.net.http}) that
 * connects to the bridge, proves it holds the token, serves the bridge's requests through
 * registered handlers, and reconnects with jittered exponential backoff whenever the connection
 * ends, until {@link #close()}.
 *
 * <p>With several bridge addresses ({@link LinkSettings#urls()}) the client fails over: when the
 * bridge in use goes away, or a bridge refuses this server because another bridge serves it
 * (4005), the next address is tried after {@link #FAILOVER_PAUSE}; the back-off pause grows only
 * once every address failed in a row, so a network's second bridge is reached within moments.
 * A bridge that goes silent (paused, hung: its TCP connection stays open) is given up after
 * {@link LinkSettings#silenceTimeout()} and counts as gone. A refusal with 4005 starts the
 * back-off over, so a server refused while the leases move is not left waiting a long pause.
 */
public final class LinkClient implements BridgeLink {
    /** Close code of a connection replaced by a newer authenticated one (docs/protocol.md). */
    static final int CLOSE_REPLACED = 4004;
    /** The least pause before reconnecting after {@link #CLOSE_REPLACED}. */
    static final Duration REPLACED_PAUSE = Duration.ofSeconds(60);
    /** Close code of a bridge that does not serve this server now (another bridge holds it). */
    static final int CLOSE_NOT_SERVED = 4005;
    /** The pause before trying the next bridge address. */
    static final Duration FAILOVER_PAUSE = Duration.ofMillis(100);
    /**
     * Refusals ({@link #CLOSE_NOT_SERVED}) after which a bridge that went silent is tried again: until
     * then the client stays on the bridge taking the server over rather than waiting out another
     * handshake timeout on the silent one (a paused holder kept a failover 2 s longer each time).
     */
    static final int SILENT_SKIPS = 20;
    /** The pause before asking the same bridge again while it takes a server over. */
    static final Duration TAKEOVER_PAUSE = Duration.ofMillis(250);
    /** Failed attempts in a row up to which powers of two are logged; after it, every this many. */
    static final long LOUD_ATTEMPTS = 128;

    private final LinkSettings settings;
    private final Handshake.Identity identity;
    private final TokenSource tokens;
    private final LinkListener listener;
    private final Logger logger;
    private final HttpClient http;
    private final ScheduledThreadPoolExecutor scheduler;
    private final Backoff backoff;
    private final Map<String, Handlers.Request> requestHandlers = new ConcurrentHashMap<>();
    private final Map<String, Handlers.Event> eventHandlers = new ConcurrentHashMap<>();
    private final AtomicLong sessions = new AtomicLong();
    /** Connection attempts that failed since the link was last up (for the log's back-off). */
    private final AtomicLong failedAttempts = new AtomicLong();
    private final Object lifecycle = new Object();
    private volatile LinkSession current;
    private volatile LinkSession up;
    private volatile boolean started;
    private volatile boolean closed;
    /** Which of the urls the next attempt uses (guarded by {@code lifecycle}). */
    private int urlIndex;
    /** Addresses tried in a row without a usable link (guarded by {@code lifecycle}). */
    private int failedInRound;
    /** The address last given up for its silence, -1 when none (guarded by {@code lifecycle}). */
    private int silentIndex = -1;
    /** Refusals since then on which that address was skipped (guarded by {@code lifecycle}). */
    private int silentSkips;

    public LinkClient(LinkSettings settings, Handshake.Identity identity, TokenSource tokens, LinkListener listener,
            Logger logger) {
        this.settings = settings;
        this.identity = identity;
        this.tokens = tokens;
        this.listener = listener;
        this.logger = logger;
        this.http = HttpClient.newBuilder().connectTimeout(settings.handshakeTimeout()).build();
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "mineclaw-link-timer");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        this.backoff = new Backoff(settings.backoffInitial(), settings.backoffMax(),
                () -> ThreadLocalRandom.current().nextDouble());
    }

    /** Serves bridge requests of {@code type} with {@code handler}. Register before {@link #start()}. */
    public void onRequest(String type, Handlers.Request handler) {
        this.requestHandlers.put(type, handler);
    }

    /** Takes bridge events of {@code type} with {@code handler}. Register before {@link #start()}. */
    public void onEvent(String type, Handlers.Event handler) {
        this.eventHandlers.put(type, handler);
    }

    /** Starts connecting; returns at once. */
    public void start() {
        synchronized (this.lifecycle) {
            if (this.started || this.closed) {
                return;
            }
            this.started = true;
        }
        connect();
    }

    /**
     * Closes the connection (1000) and stops reconnecting; requests in flight fail with
     * DISCONNECTED at once. Waits at most about a second for the bridge to answer the close.
     */
    public void close() {
        LinkSession session;
        synchronized (this.lifecycle) {
            this.closed = true;
            session = this.current;
        }
        this.scheduler.shutdownNow();
        if (session != null) {
            try {
                session.close("plugin shutting down").get(2, TimeUnit.SECONDS);
            } catch (InterruptedException exc) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException exc) {
                this.logger.fine("link: the close did not complete cleanly: " + exc);
            }
        }
        // The client's selector thread would otherwise outlive the plugin (and a reload's class loader).
        this.http.shutdownNow();
    }

    /** Whether {@link #close()} has stopped the HTTP client and its threads, waiting at most {@code wait}. */
    boolean httpTerminated(Duration wait) throws InterruptedException {
        return this.http.awaitTermination(wait);
    }

    @Override
    public boolean isUp() {
        return this.up != null;
    }

    @Override
    public CompletableFuture<JsonObject> request(String type, JsonObject data, Duration timeout) {
        LinkSession session = this.up;
        if (session == null) {
            return CompletableFuture.failedFuture(LinkException.disconnected("the link to the bridge is down"));
        }
        return session.request(type, data, timeout);
    }

    /** {@link #request(String, JsonObject, Duration)} with the settings' request timeout. */
    public CompletableFuture<JsonObject> request(String type, JsonObject data) {
        return request(type, data, this.settings.requestTimeout());
    }

    @Override
    public boolean sendEvent(String type, JsonObject data) {
        LinkSession session = this.up;
        return session != null && session.event(type, data);
    }

    private void connect() {
        LinkSession session;
        java.net.URI url;
        synchronized (this.lifecycle) {
            if (this.closed) {
                return;
            }
            session = new LinkSession(this, this.sessions.incrementAndGet());
            this.current = session;
            url = this.settings.urls().get(this.urlIndex);
        }
        this.http.newWebSocketBuilder()
                .connectTimeout(this.settings.handshakeTimeout())
                .buildAsync(url, session)
                .whenComplete((socket, error) -> {
                    if (error == null && this.closed) {
                        socket.abort();
                    } else if (error != null) {
                        logFailedAttempt(url, rootMessage(error));
                        if (timedOut(error)) {
                            session.markSilent();  // it took the connection and never answered
                        }
                        retryLater(session, false);
                    }
                });
    }

    /** The bridge address the client uses now (or tries next). */
    java.net.URI currentUrl() {
        synchronized (this.lifecycle) {
            return this.settings.urls().get(this.urlIndex);
        }
    }

    void sessionUp(LinkSession session, String sessionId) {
        synchronized (this.lifecycle) {
            if (this.closed || this.current != session) {
                return;
            }
            this.up = session;
            this.backoff.reset();
            this.failedInRound = 0;
            this.silentIndex = -1;
            this.silentSkips = 0;
        }
        this.failedAttempts.set(0);
        this.logger.info("link: connected to the bridge at " + currentUrl() + ", session " + sessionId);
        this.listener.linkUp(sessionId);
    }

    /** @param opened whether the WebSocket had opened; a connection that never did is not reported */
    void sessionEnded(LinkSession session, String reason, boolean opened) {
        boolean wasUp;
        synchronized (this.lifecycle) {
            wasUp = this.up == session;
            if (wasUp) {
                this.up = null;
            }
        }
        if (wasUp) {
            this.logger.info("link: connection ended: " + reason);
        } else {
            // A connection that never became usable (refused handshake, bad token) is a failed attempt.
            logFailedAttempt(currentUrl(), reason);
        }
        if (opened) {
            this.listener.linkDown(reason);
        }
        retryLater(session, wasUp);
    }

    /** @param wasUp whether the session had been usable: its bridge went away rather than refusing */
    private void retryLater(LinkSession session, boolean wasUp) {
        Duration delay;
        synchronized (this.lifecycle) {
            if (this.closed || this.current != session) {
                return;
            }
            this.current = null;
            if (session.endedSilent()) {
                this.silentIndex = this.urlIndex;
                this.silentSkips = 0;
            }
            delay = nextDelay(session.closeCode(), wasUp);
        }
        if (session.closeCode() == CLOSE_REPLACED) {
            this.logger.warning("link: another server connected to the bridge with this server id and token and"
                    + " replaced this one; retrying in " + delay.toSeconds() + " s (give each server its own"
                    + " server-id and token)");
        }
        this.logger.fine("link: reconnecting in " + delay.toMillis() + " ms");
        try {
            this.scheduler.schedule(this::connect, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException exc) {
            // Closed concurrently: nothing to reconnect.
        }
    }

    /** The pause before the next attempt, moving on to the next bridge address (call holding lifecycle). */
    private Duration nextDelay(int closeCode, boolean wasUp) {
        if (closeCode == CLOSE_NOT_SERVED) {
            // A failover is under way: the server is served (or about to be) by another bridge.
            // The pause starts over rather than growing while the leases move.
            this.backoff.reset();
        }
        int count = this.settings.urls().size();
        if (count == 1 || closeCode == CLOSE_REPLACED) {
            // One bridge, or this server's id was taken over on the bridge in use: stay on it.
            return delayAfter(closeCode, this.backoff.next());
        }
        int next = (this.urlIndex + 1) % count;
        if (closeCode == CLOSE_NOT_SERVED && next == this.silentIndex && this.silentSkips < SILENT_SKIPS) {
            // This bridge is taking the server over from the one that went silent: ask it again
            // shortly instead of waiting out a handshake on the silent one.
            this.silentSkips++;
            return TAKEOVER_PAUSE;
        }
        this.urlIndex = next;
        this.failedInRound = wasUp ? 0 : this.failedInRound + 1;
        if (this.failedInRound < count) {
            return FAILOVER_PAUSE;  // the next bridge may serve this server: no back-off yet
        }
        this.failedInRound = 0;  // every bridge failed in a row: pause, then another round
        return this.backoff.next();
    }

    /**
     * A bridge that stays down would otherwise add a line every 30 s forever: the 1st, 2nd, 4th,
     * 8th ... 128th failed attempt in a row is logged at INFO, then every 128th (about an hour
     * apart at the longest pause); the others at FINE. Each line says how many attempts failed.
     */
    private void logFailedAttempt(java.net.URI url, String why) {
        long attempt = this.failedAttempts.incrementAndGet();
        String line = "link: cannot connect to " + url + ": " + why + " (attempt " + attempt
                + " since the link was last up)";
        this.logger.log(reportedAttempt(attempt) ? Level.INFO : Level.FINE, line);
    }

    /** Whether failed attempt number {@code attempt} (from 1) is logged at INFO. */
    static boolean reportedAttempt(long attempt) {
        return attempt <= LOUD_ATTEMPTS ? Long.bitCount(attempt) == 1 : attempt % LOUD_ATTEMPTS == 0;
    }

    /**
     * The pause before the next attempt. After 4004 (a newer connection with the same token replaced
     * this one) an immediate retry would replace the other server in turn, and the two would take the
     * link from each other forever; the pause makes that visible and cheap instead.
     */
    static Duration delayAfter(int closeCode, Duration backoffDelay) {
        if (closeCode == CLOSE_REPLACED && backoffDelay.compareTo(REPLACED_PAUSE) < 0) {
            return REPLACED_PAUSE;
        }
        return backoffDelay;
    }

    private static boolean timedOut(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.net.http.HttpTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static String rootMessage(Throwable error) {
        Throwable cause = error;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    }

    LinkSettings settings() {
        return this.settings;
    }

    Handshake.Identity identity() {
        return this.identity;
    }

    TokenSource tokens() {
        return this.tokens;
    }

    LinkListener listener() {
        return this.listener;
    }

    Logger logger() {
        return this.logger;
    }

    ScheduledExecutorService scheduler() {
        return this.scheduler;
    }

    Handlers.Request requestHandler(String type) {
        return this.requestHandlers.get(type);
    }

    Handlers.Event eventHandler(String type) {
        return this.eventHandlers.get(type);
    }
}
