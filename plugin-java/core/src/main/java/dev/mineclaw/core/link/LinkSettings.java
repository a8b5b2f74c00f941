package dev.mineclaw.core.link;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * How the link connects and when it gives up. Immutable; start from {@link #defaults(URI)}.
 *
 * @param url the bridge, e.g. {@code ws://127.0.0.1:25580/link}
 * @param requestTimeout how long a request waits for its answer by default (10 s)
 * @param handshakeTimeout how long a new connection may take to become usable (10 s)
 * @param backoffInitial the first reconnect delay ceiling (500 ms)
 * @param backoffMax the largest reconnect delay ceiling (30 s)
 * @param maxFrameBytes the frame cap (65536): a larger frame is never sent, and a reassembled
 *     incoming message over this many characters closes the connection with 1009 (characters
 *     never outnumber UTF-8 bytes, so the incoming check is the lenient one)
 */
public record LinkSettings(URI url, Duration requestTimeout, Duration handshakeTimeout, Duration backoffInitial,
        Duration backoffMax, int maxFrameBytes) {
    public LinkSettings {
        Objects.requireNonNull(url, "url");
        String scheme = url.getScheme();
        if (!"ws".equals(scheme) && !"wss".equals(scheme)) {
            throw new IllegalArgumentException("the bridge url must start with ws:// or wss://, got " + url);
        }
    }

    public static LinkSettings defaults(URI url) {
        return new LinkSettings(url, Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofMillis(500),
                Duration.ofSeconds(30), 64 * 1024);
    }

    public LinkSettings withBackoff(Duration initial, Duration max) {
        return new LinkSettings(this.url, this.requestTimeout, this.handshakeTimeout, initial, max, this.maxFrameBytes);
    }

    public LinkSettings withRequestTimeout(Duration timeout) {
        return new LinkSettings(this.url, timeout, this.handshakeTimeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes);
    }

    public LinkSettings withHandshakeTimeout(Duration timeout) {
        return new LinkSettings(this.url, this.requestTimeout, timeout, this.backoffInitial, this.backoffMax,
                this.maxFrameBytes);
    }

    public LinkSettings withMaxFrameBytes(int bytes) {
        return new LinkSettings(this.url, this.requestTimeout, this.handshakeTimeout, this.backoffInitial,
                this.backoffMax, bytes);
    }
}
