package dev.mineclaw.paper;

import dev.mineclaw.core.platform.Permissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.bukkit.entity.Player;

/**
 * Which reported permission nodes each online player holds, read where Paper allows it (the
 * player's own thread: join, command-tree resend after a permission change, world change, and
 * after each chat message) and served to the async chat thread, where Paper's permission map is
 * not safe to read. A player who is not in the cache (just quit, or not yet joined) holds nothing.
 */
final class PermissionCache {
    private final Map<UUID, List<String>> granted = new ConcurrentHashMap<>();

    /** Reads {@code player}'s nodes now. Call on the player's thread (Folia: its region). */
    void refresh(Player player) {
        List<String> held = new ArrayList<>();
        for (String node : Permissions.reported()) {
            if (player.hasPermission(node)) {
                held.add(node);
            }
        }
        this.granted.put(player.getUniqueId(), List.copyOf(held));
    }

    /** The nodes last read for {@code player}; empty when none were. Any thread. */
    List<String> granted(UUID player) {
        return this.granted.getOrDefault(player, List.of());
    }

    void forget(UUID player) {
        this.granted.remove(player);
    }
}
