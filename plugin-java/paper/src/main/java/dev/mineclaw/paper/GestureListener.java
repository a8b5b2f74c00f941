package dev.mineclaw.paper;

import dev.mineclaw.core.gesture.GestureAnswers;
import org.bukkit.Location;
import org.bukkit.entity.Player;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.block.Action;
import org.bukkit.event.player.PlayerInteractEvent;
import org.bukkit.event.player.PlayerMoveEvent;
import org.bukkit.event.player.PlayerToggleSneakEvent;
import org.bukkit.inventory.EquipmentSlot;
import org.bukkit.inventory.ItemStack;

/**
 * The gestures a player may answer a yes/no question with, reported to the core, which alone
 * decides whether one answers anything ({@link GestureAnswers}). Each event fires on the
 * player's own thread; a player with no question pending costs one map lookup. Cancelled events
 * count too: Bukkit fires a right-click in air already cancelled.
 */
final class GestureListener implements Listener {
    private final GestureAnswers gestures;

    GestureListener(GestureAnswers gestures) {
        this.gestures = gestures;
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onSneak(PlayerToggleSneakEvent event) {
        Player player = event.getPlayer();
        if (this.gestures.expecting(player.getUniqueId())) {
            this.gestures.sneak(PaperPlatform.ref(player), event.isSneaking());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onMove(PlayerMoveEvent event) {
        Location to = event.getTo();
        if (to.getPitch() == event.getFrom().getPitch()) {
            return; // walking without turning the head: the most common move by far
        }
        Player player = event.getPlayer();
        if (this.gestures.expecting(player.getUniqueId())) {
            this.gestures.look(PaperPlatform.ref(player), to.getPitch());
        }
    }

    @EventHandler(priority = EventPriority.MONITOR)
    void onInteract(PlayerInteractEvent event) {
        // Fired once per hand: the main hand's is the one that counts.
        if (event.getAction() != Action.RIGHT_CLICK_AIR || event.getHand() != EquipmentSlot.HAND) {
            return;
        }
        Player player = event.getPlayer();
        ItemStack item = event.getItem();
        if (item == null || !this.gestures.expecting(player.getUniqueId())) {
            return;
        }
        this.gestures.useItemInAir(PaperPlatform.ref(player), item.getType().getKey().toString(),
                item.getType().isEdible());
    }
}
