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
 * @param backoffMax the largest reconnect delay ceiling (30 s)
 * @param maxFrameBytes the frame cap (65536): a larger frame is never sent, and a reassembled
 *     incoming message over this many characters closes the connection with 1009 (characters
 *     never outnumber UTF-8 bytes, so the incoming check is the lenient one)
 */
public record LinkSettings(List<URI> urls, Duration requestTimeout, Duration handshakeTimeout,
        Duration backoffInitial, Duration backoffMax, int maxFrameBytes) {
    /** At most this many bridge addresses. */
    public static final int MAX_URLS = 8;

    public LinkSettings {
        urls = List.copyOf(urls);
        if (urls.isEmpty() || urls.size() > MAX_URLS) {
            throw new IllegalArgumentException("give 1-" + MAX_URLS + " bridge urls, got " + urls.size());
        }
        if (new HashSet<>(urls).size() != urls.size()) {
            throw new IllegalArgumentException("a bridge url is listed twice: " + urls);
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
                Duration.ofSeconds(30), 64 * 1024);
    }

    public LinkSettings withBackoff(Duration initial, Duration max) {
        return new LinkSettings(this.urls, this.requestTimeout, this.handshakeTimeout, initial, max, this.maxFrameBytes);
    }

    public LinkSettings withRequestTimeout(Duration timeout) {
        return new LinkSettings(this.urls, timeout, this.handshakeTimeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes);
    }

    public LinkSettings withHandshakeTimeout(Duration timeout) {
        return new LinkSettings(this.urls, this.requestTimeout, timeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes);
    }

    public LinkSettings withMaxFrameBytes(int bytes) {
        return new LinkSettings(this.urls, this.requestTimeout, this.handshakeTimeout, this.backoffInitial,
                this.backoffMax, bytes);
    }
}
