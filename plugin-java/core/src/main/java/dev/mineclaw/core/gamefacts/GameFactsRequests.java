package dev.mineclaw.core.gamefacts;

import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.Scheduling;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Serves {@code facts.recipes} and {@code facts.item} from the server's own registries. The
 * registries are read on the global executor (the only place Folia allows it), then indexed off
 * it into a {@link GameIndex} that is kept until the registry's stamp changes (a datapack reload, a plugin enabled
 * or disabled), so a lookup costs a reading only once per change; the projection runs wherever
 * the future completes, on the immutable index, and the answers are kept with it (at most
 * {@link #ANSWERS_MAX}), so a question asked again costs a map lookup. Nothing here is about a
 * player.
 */
public final class GameFactsRequests {
    /** The feature a plugin serving these requests announces in {@code hello}. */
    public static final String FEATURE = "game_facts";
    /** The answers kept per reading; past it, answers are computed and not kept. */
    public static final int ANSWERS_MAX = 1024;

    private final Platform platform;
    private final GameRegistry registry;
    private final Duration timeout;
    private volatile Cached cached;

    private record Cached(long stamp, GameIndex index, Map<String, JsonObject> answers) {}

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
        String asked = "recipes|" + uses + "|" + limit + "|" + maxChars + "|" + item;
        return answer(asked, index -> FactsProjection.recipes(index, item, uses, limit, maxChars));
    }

    /** Answers {@code facts.item}. */
    public CompletableFuture<JsonObject> item(JsonObject data) {
        String item = data.get("item").getAsString();
        return answer("item|" + item, index -> FactsProjection.item(index, item));
    }

    /** The index of the registry as it is now: the kept one while the stamp holds, else a new reading. */
    public CompletableFuture<GameIndex> index() {
        return cached().thenApply(Cached::index);
    }

    private CompletableFuture<Cached> cached() {
        long stamp = this.registry.stamp();
        Cached kept = this.cached;
        if (kept != null && kept.stamp() == stamp) {
            return CompletableFuture.completedFuture(kept);
        }
        // Only the reading runs on the global executor; the index is built off the server's
        // thread (tens of milliseconds for vanilla's registry: more than a tick).
        return Scheduling.onGlobal(this.platform, this.timeout, this.registry::read).thenApplyAsync(facts -> {
            // The stamp read before the reading: a change during it makes the next lookup read again.
            Cached fresh = new Cached(stamp, GameIndex.of(facts), new ConcurrentHashMap<>());
            this.cached = fresh;
            return fresh;
        });
    }

    /** The kept answer to the same question of the same reading, or a new one (then kept). */
    private CompletableFuture<JsonObject> answer(String question, Function<GameIndex, JsonObject> compute) {
        return cached().thenApply(cached -> {
            JsonObject answer = cached.answers().get(question);
            if (answer == null) {
                answer = compute.apply(cached.index());
                if (cached.answers().size() < ANSWERS_MAX) {
                    cached.answers().put(question, answer);
                }
            }
            return answer.deepCopy(); // the link owns what it is handed
        });
    }
}
