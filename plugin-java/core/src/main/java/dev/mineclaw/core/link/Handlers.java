package dev.mineclaw.core.link;

import com.google.gson.JsonObject;
import java.util.concurrent.CompletableFuture;

/** Handlers for what the bridge asks of the plugin. */
public final class Handlers {
    private Handlers() {}

    /**
     * Answers one request. The future's value is the answer's data; failing it with a {@link
     * LinkException} sends that code, with {@link dev.mineclaw.core.platform.PlayerGoneException}
     * sends {@code PLAYER_OFFLINE}, and with anything else sends {@code INTERNAL}.
     */
    @FunctionalInterface
    public interface Request {
        CompletableFuture<JsonObject> handle(JsonObject data);
    }

    /** Takes one event. Must not block: it runs on the link's receiving thread. */
    @FunctionalInterface
    public interface Event {
        void handle(JsonObject data);
    }
}
