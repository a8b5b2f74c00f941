package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.chat.ChatOutcome;
import dev.mineclaw.core.platform.PermissionFacts;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import io.papermc.paper.chat.ChatRenderer;
import io.papermc.paper.event.player.AsyncChatEvent;
import net.kyori.adventure.text.Component;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;

/**
 * Public chat: the plain text goes to the core, which answers within the verdict timeout; the
 * outcome is applied to the event. This runs on Paper's async chat thread, so it touches no world
 * state: it reads permissions (thread-safe in Paper) and only changes the event.
 */
final class ChatListener implements Listener {
    private final MineclawCore core;
    private final Platform platform;

    ChatListener(MineclawCore core, Platform platform) {
        this.core = core;
        this.platform = platform;
    }

    // HIGH and ignoreCancelled: mutes and anti-spam plugins decide first, and a message they
    // cancelled is never forwarded to the assistant.
    @EventHandler(priority = EventPriority.HIGH, ignoreCancelled = true)
    void onChat(AsyncChatEvent event) {
        String text = TextRenderer.plain(event.message());
        PlayerRef player = PaperPlatform.ref(event.getPlayer());
        // The core bounds this wait by the verdict timeout and never fails it: chat is not held up
        // longer than that, whatever the link does.
        ChatOutcome outcome = this.core.chat(player, PermissionFacts.read(this.platform, player.uuid()), text).join();
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
