package dev.mineclaw.core.link;

import java.net.URI;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * How the link connects and when it gives up. Immutable; start from {@link #defaults(URI)}.
 *
 * @param urls the bridges, e.g. {@code ws://127.0.0.1:25580/link}, in the order they are tried:
 *     when the one in use goes away (or refuses this server with 4005) the next is tried at once,
 *     and the back-off pause only comes after every one of them failed in a row
 * @param requestTimeout how long a request waits for its answer by default (10 s)
 * @param handshakeTimeout how long a new connection may take to become usable (10 s)
 * @param backoffInitial the first reconnect delay ceiling (500 ms)
 * @param backoffMax the largest reconnect delay ceiling (5 s)
 * @param maxFrameBytes the frame cap (65536): a larger frame is never sent, and a reassembled
 *     incoming message over this many characters closes the connection with 1009 (characters
 *     never outnumber UTF-8 bytes, so the incoming check is the lenient one)
 * @param silenceTimeout how long a linked bridge may send nothing, not even the answer to a ping,
 *     before the link is given up and the next bridge tried (20 s here; the plugin's
 *     {@code link-timeout-ms}, 5 s by default): a paused or hung bridge keeps its TCP connection
 *     open, so only silence tells. The client pings every third of it.
 */
public record LinkSettings(List<URI> urls, Duration requestTimeout, Duration handshakeTimeout,
        Duration backoffInitial, Duration backoffMax, int maxFrameBytes, Duration silenceTimeout) {
    /** At most this many bridge addresses. */
    public static final int MAX_URLS = 8;
    /**
     * The longest pause between reconnect attempts: low, since a bridge taking over a server must
     * not wait out a long pause grown while its servers were refused (and a refusal with 4005
     * starts the pause over).
     */
    public static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(5);

    public LinkSettings {
        urls = List.copyOf(urls);
        if (urls.isEmpty() || urls.size() > MAX_URLS) {
            throw new IllegalArgumentException("give 1-" + MAX_URLS + " bridge urls, got " + urls.size());
        }
        if (new HashSet<>(urls).size() != urls.size()) {
            throw new IllegalArgumentException("a bridge url is listed twice: " + urls);
        }
        if (silenceTimeout.toMillis() < 3) {
            throw new IllegalArgumentException("the silence timeout must be at least 3 ms, got " + silenceTimeout);
        }
        for (URI url : urls) {
            Objects.requireNonNull(url, "url");
            String scheme = url.getScheme();
            if (!"ws".equals(scheme) && !"wss".equals(scheme)) {
                throw new IllegalArgumentException("the bridge url must start with ws:// or wss://, got " + url);
            }
        }
    }

    /** The first bridge. */
    public URI url() {
        return this.urls.get(0);
    }

    public static LinkSettings defaults(URI url) {
        return defaults(List.of(url));
    }

    public static LinkSettings defaults(List<URI> urls) {
        return new LinkSettings(urls, Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofMillis(500),
                DEFAULT_BACKOFF_MAX, 64 * 1024, Duration.ofSeconds(20));
    }

    /** How often the client pings the bridge: a third of the silence timeout. */
    public Duration pingInterval() {
        return this.silenceTimeout.dividedBy(3);
    }

    public LinkSettings withSilenceTimeout(Duration timeout) {
        return new LinkSettings(this.urls, this.requestTimeout, this.handshakeTimeout, this.backoffInitial,
                this.backoffMax, this.maxFrameBytes, timeout);
    }

    public LinkSettings withBackoff(Duration initial, Duration max) {
        return new LinkSettings(this.urls, this.requestTimeout, this.handshakeTimeout, initial, max, this.maxFrameBytes,
                this.silenceTimeout);
    }

    public LinkSettings withRequestTimeout(Duration timeout) {
        return new LinkSettings(this.urls, timeout, this.handshakeTimeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes, this.silenceTimeout);
    }

    public LinkSettings withHandshakeTimeout(Duration timeout) {
        return new LinkSettings(this.urls, this.requestTimeout, timeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes, this.silenceTimeout);
    }

    public LinkSettings withMaxFrameBytes(int bytes) {
        return new LinkSettings(this.urls, this.requestTimeout, this.handshakeTimeout, this.backoffInitial,
                this.backoffMax, bytes, this.silenceTimeout);
    }
}
