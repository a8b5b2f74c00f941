package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.player.PlayerChangedWorldEvent;
import org.bukkit.event.player.PlayerCommandSendEvent;
import org.bukkit.event.player.PlayerJoinEvent;
import org.bukkit.event.player.PlayerQuitEvent;

/**
 * Joins and quits, told to the bridge (a quit invalidates that player's pending confirmations),
 * and the moments a player's permissions are read for the chat thread: join, world change, and
 * the command-tree resend Paper makes after permissions change (LuckPerms and Paper's own
 * recalculation both trigger it). Each fires on the player's own thread.
 */
final class PlayerEvents implements Listener {
    private final MineclawCore core;
    private final PermissionCache permissions;

    PlayerEvents(MineclawCore core, PermissionCache permissions) {
        this.core = core;
        this.permissions = permissions;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onJoin(PlayerJoinEvent event) {
        this.permissions.refresh(event.getPlayer());
        this.core.playerJoined(PaperPlatform.ref(event.getPlayer()));
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onQuit(PlayerQuitEvent event) {
        this.permissions.forget(event.getPlayer().getUniqueId());
        this.core.playerQuit(PaperPlatform.ref(event.getPlayer()));
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onPermissionsResent(PlayerCommandSendEvent event) {
        this.permissions.refresh(event.getPlayer());
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onWorldChange(PlayerChangedWorldEvent event) {
        this.permissions.refresh(event.getPlayer());
    }
}
