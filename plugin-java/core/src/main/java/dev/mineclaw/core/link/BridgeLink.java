package dev.mineclaw.core.link;

import com.google.gson.JsonObject;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** What the chat flow and the command forwarder need from the link; tests hand in a fake. */
public interface BridgeLink {
    /** Whether the handshake has completed and the connection is open. */
    boolean isUp();

    /**
     * Sends a request and returns its answer's data. Fails at once with {@link LinkException}
     * {@code DISCONNECTED} when the link is down; later with {@code DISCONNECTED} if it drops,
     * {@code TIMEOUT} after {@code timeout}, or the peer's error code.
     */
    CompletableFuture<JsonObject> request(String type, JsonObject data, Duration timeout);

    /** Sends an event if the link is up; returns whether it was queued. */
    boolean sendEvent(String type, JsonObject data);
}
