package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.chat.ChatOutcome;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import io.papermc.paper.chat.ChatRenderer;
import io.papermc.paper.event.player.AsyncChatEvent;
import java.util.concurrent.CompletableFuture;
import net.kyori.adventure.text.Component;
import org.bukkit.entity.Player;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.plugin.Plugin;
import org.bukkit.plugin.PluginManager;

/**
 * Public chat: the plain text goes to the core and the outcome is applied to the event. Only on
 * Paper's async chat thread does it wait for the verdict (bounded by the verdict timeout). A chat
 * event fired synchronously (another plugin calling {@code Player#chat} on the main or a region
 * thread) is never held: what a local rule decides at once (not a wake; link down) is applied,
 * anything else passes through untouched while the bridge still hears it, and the verdict's
 * private notice reaches the player when it comes. Permissions come from {@link PermissionCache},
 * never from Paper's permission map on this thread.
 */
final class ChatListener implements Listener {
    private final MineclawCore core;
    private final PermissionCache permissions;
    private final RegionSchedulers schedulers;

    ChatListener(MineclawCore core, PermissionCache permissions, RegionSchedulers schedulers) {
        this.core = core;
        this.permissions = permissions;
        this.schedulers = schedulers;
    }

    /**
     * Registers at the configured priority; cancelled messages are skipped, so a mute or
     * anti-spam plugin running earlier keeps them from the assistant.
     */
    void register(Plugin plugin, PluginManager manager, EventPriority priority) {
        manager.registerEvent(AsyncChatEvent.class, this, priority, (listener, event) -> {
            if (event instanceof AsyncChatEvent chat) {
                onChat(chat);
            }
        }, plugin, true);
    }

    void onChat(AsyncChatEvent event) {
        Player sender = event.getPlayer();
        PlayerRef player = PaperPlatform.ref(sender);
        String text = TextRenderer.plain(event.message());
        CompletableFuture<ChatOutcome> decided = this.core.chat(player, this.permissions.granted(player.uuid()), text);
        // The next message sees permissions as they are now (read on the player's own thread).
        this.schedulers.forPlayer(player.uuid(), () -> {
            Player online = sender.getServer().getPlayer(player.uuid());
            if (online != null) {
                this.permissions.refresh(online);
            }
        }, () -> { });
        ChatOutcome outcome;
        if (event.isAsynchronous()) {
            // The core bounds this wait by the verdict timeout and never fails it.
            outcome = decided.join();
        } else {
            outcome = decided.getNow(null);
            if (outcome == null) {
                return;
            }
        }
        apply(event, outcome);
    }

    private void apply(AsyncChatEvent event, ChatOutcome outcome) {
        if (!outcome.shownPublicly()) {
            event.setCancelled(true);
        } else if (outcome.aiPrefix()) {
            event.renderer(prefixed(this.core.messages().line(Messages.AI_PREFIX), event.renderer()));
        }
    }

    private static ChatRenderer prefixed(Component prefix, ChatRenderer original) {
        return (source, displayName, message, viewer) ->
                prefix.append(original.render(source, displayName, message, viewer));
    }
}
