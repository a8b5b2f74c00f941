package dev.mineclaw.core.snapshot;

import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.Scheduling;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Serves {@code snapshot.player}, {@code snapshot.item} and {@code snapshot.block}. The facts are
 * read on the named player's own executor (Folia's entity scheduler), which is the only place the
 * thread rules allow; the projections need only the immutable facts, so they may run there or
 * wherever the future completes. A player who is not online, or leaves first, fails the future
 * with {@link PlayerGoneException}, which the link answers {@code PLAYER_OFFLINE}.
 */
public final class SnapshotRequests {
    /** The feature a plugin serving these requests announces in {@code hello}. */
    public static final String FEATURE = "snapshots";

    private final Platform platform;
    private final Duration timeout;

    /** @param timeout how long the server may take to run the read (under the bridge's 10 s) */
    public SnapshotRequests(Platform platform, Duration timeout) {
        this.platform = platform;
        this.timeout = timeout;
    }

    /** Registers the three handlers on {@code link}. */
    public void register(LinkClient link) {
        link.onRequest("snapshot.player", this::player);
        link.onRequest("snapshot.item", this::item);
        link.onRequest("snapshot.block", this::block);
    }

    /** Answers {@code snapshot.player}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> player(JsonObject data) {
        UUID player = player(data.get("player").getAsString());
        return onPlayer(player, uuid -> PlayerProjection.project(ref(uuid), this.platform.playerFacts(uuid)));
    }

    /** Answers {@code snapshot.item}. */
    public CompletableFuture<JsonObject> item(JsonObject data) {
        UUID player = player(data.get("player").getAsString());
        String mode = data.get("mode").getAsString();
        int slot = data.has("slot") ? data.get("slot").getAsInt() : -1;
        int maxSlots = data.get("max_slots").getAsInt();
        int maxChars = data.get("max_chars").getAsInt();
        return onPlayer(player, uuid -> this.platform.inventory(uuid))
                .thenApply(inventory -> ItemProjection.project(inventory, mode, slot, maxSlots, maxChars));
    }

    /** Answers {@code snapshot.block}. */
    public CompletableFuture<JsonObject> block(JsonObject data) {
        UUID player = player(data.get("player").getAsString());
        boolean look = "look".equals(data.get("mode").getAsString());
        int distance = data.get("distance").getAsInt();
        return onPlayer(player, uuid -> look ? this.platform.lookedAtBlock(uuid, distance)
                : this.platform.blockAtFeet(uuid)).thenApply(BlockProjection::project);
    }

    private <T> CompletableFuture<T> onPlayer(UUID player, Function<UUID, T> read) {
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> read.apply(player));
    }

    /** The player's current name, read while they are known to be online. */
    private PlayerRef ref(UUID player) {
        return this.platform.onlinePlayers().stream()
                .filter(online -> online.uuid().equals(player))
                .findFirst()
                .orElseThrow(() -> new PlayerGoneException(player));
    }

    private static UUID player(String uuid) {
        return UUID.fromString(uuid);
    }
}
