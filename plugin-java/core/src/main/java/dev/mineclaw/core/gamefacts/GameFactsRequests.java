package dev.mineclaw.core.gamefacts;

import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.Scheduling;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Serves {@code facts.recipes} and {@code facts.item} from the server's own registries. The
 * registries are read on the global executor (the only place Folia allows it) into a {@link
 * GameIndex} that is kept until the registry's stamp changes (a datapack reload, a plugin enabled
 * or disabled), so a lookup costs a reading only once per change; the projection runs wherever
 * the future completes, on the immutable index. Nothing here is about a player.
 */
public final class GameFactsRequests {
    /** The feature a plugin serving these requests announces in {@code hello}. */
    public static final String FEATURE = "game_facts";

    private final Platform platform;
    private final GameRegistry registry;
    private final Duration timeout;
    private volatile Cached cached;

    private record Cached(long stamp, GameIndex index) {}

    /** @param timeout how long the server may take to read its registries (under the bridge's 10 s) */
    public GameFactsRequests(Platform platform, GameRegistry registry, Duration timeout) {
        this.platform = platform;
        this.registry = registry;
        this.timeout = timeout;
    }

    /** Registers the two handlers on {@code link}. */
    public void register(LinkClient link) {
        link.onRequest("facts.recipes", this::recipes);
        link.onRequest("facts.item", this::item);
    }

    /** Answers {@code facts.recipes}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> recipes(JsonObject data) {
        String item = data.get("item").getAsString();
        boolean uses = "uses".equals(data.get("direction").getAsString());
        int limit = data.get("limit").getAsInt();
        int maxChars = data.get("max_chars").getAsInt();
        return withIndex(index -> FactsProjection.recipes(index, item, uses, limit, maxChars));
    }

    /** Answers {@code facts.item}. */
    public CompletableFuture<JsonObject> item(JsonObject data) {
        String item = data.get("item").getAsString();
        return withIndex(index -> FactsProjection.item(index, item));
    }

    /** The index of the registry as it is now: the kept one while the stamp holds, else a new reading. */
    public CompletableFuture<GameIndex> index() {
        long stamp = this.registry.stamp();
        Cached kept = this.cached;
        if (kept != null && kept.stamp() == stamp) {
            return CompletableFuture.completedFuture(kept.index());
        }
        return Scheduling.onGlobal(this.platform, this.timeout, this.registry::read).thenApply(facts -> {
            GameIndex index = GameIndex.of(facts);
            // The stamp read before the reading: a change during it makes the next lookup read again.
            this.cached = new Cached(stamp, index);
            return index;
        });
    }

    private CompletableFuture<JsonObject> withIndex(Function<GameIndex, JsonObject> answer) {
        return index().thenApply(answer);
    }
}
