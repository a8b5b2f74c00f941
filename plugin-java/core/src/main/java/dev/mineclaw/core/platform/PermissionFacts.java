package dev.mineclaw.core.platform;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** Reads which of the reported permission nodes a player holds, on that player's executor. */
public final class PermissionFacts {
    private PermissionFacts() {}

    /** The nodes of {@link Permissions#reported()} that {@code player} holds, in that order. */
    public static CompletableFuture<List<String>> of(Platform platform, UUID player, Duration timeout) {
        return Scheduling.onPlayer(platform, player, timeout, () -> read(platform, player));
    }

    /** The same, for a caller already on {@code player}'s executor. */
    public static List<String> read(Platform platform, UUID player) {
        List<String> held = new ArrayList<>();
        for (String node : Permissions.reported()) {
            if (platform.hasPermission(player, node)) {
                held.add(node);
            }
        }
        return List.copyOf(held);
    }
}
