package dev.mineclaw.core.support;

import com.google.gson.JsonObject;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.link.LinkException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A link whose answers the test decides; records every request. */
public final class FakeLink implements BridgeLink {
    /** One request the code under test made. */
    public record Sent(String type, JsonObject data, Duration timeout) {}

    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<JsonObject> events = new CopyOnWriteArrayList<>();
    private volatile boolean up = true;
    private volatile Function<Sent, CompletableFuture<JsonObject>> answers =
            request -> new CompletableFuture<>();

    public void setUp(boolean isUp) {
        this.up = isUp;
    }

    public void answer(Function<Sent, CompletableFuture<JsonObject>> how) {
        this.answers = how;
    }

    public List<Sent> sent() {
        return this.sent;
    }

    public List<JsonObject> events() {
        return this.events;
    }

    @Override
    public boolean isUp() {
        return this.up;
    }

    @Override
    public CompletableFuture<JsonObject> request(String type, JsonObject data, Duration timeout) {
        if (!this.up) {
            return CompletableFuture.failedFuture(LinkException.disconnected("down"));
        }
        Sent request = new Sent(type, data, timeout);
        this.sent.add(request);
        return this.answers.apply(request);
    }

    @Override
    public boolean sendEvent(String type, JsonObject data) {
        if (!this.up) {
            return false;
        }
        this.events.add(data);
        return true;
    }
}
