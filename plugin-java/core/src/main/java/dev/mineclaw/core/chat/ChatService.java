package dev.mineclaw.core.chat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.link.LinkState;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import net.kyori.adventure.text.Component;

/**
 * Decides what happens to a public chat message. With {@code forward: prefixed} only messages
 * starting with the public prefix are asked about; with {@code all}, every message. The verdict
 * is awaited at most the verdict timeout; without one (link down, late, failed) an ordinary
 * message passes untouched and a prefixed one is cancelled with the offline line, so the link
 * never blocks chat.
 */
public final class ChatService {
    private static final int TEXT_MAX = 4096;
    private static final long SAFETY_MARGIN_MS = 100;

    private final BridgeLink link;
    private final Messages messages;
    private final TextRenderer renderer;
    private final Duration verdictTimeout;
    private final Logger logger;
    private volatile LinkState state;
    private volatile KeptAsks kept;

    /**
     * @param defaultPrefix the wake prefix used until the bridge names one (and while down, the
     *     last one it named)
     * @param verdictTimeout how long a chat message may wait for the bridge (250 ms by default)
     */
    public ChatService(BridgeLink link, Messages messages, TextRenderer renderer, String defaultPrefix,
            Duration verdictTimeout, Logger logger) {
        this.link = link;
        this.messages = messages;
        this.renderer = renderer;
        this.verdictTimeout = verdictTimeout;
        this.logger = logger;
        this.state = new LinkState(false, defaultPrefix);
    }

    /** Where wakes are kept until the bridge ends them (protocol 1.5); none by default. */
    public void keep(KeptAsks asks) {
        this.kept = asks;
    }

    /** The bridge's latest {@code link.state}. */
    public void linkState(LinkState newState) {
        this.state = newState;
    }

    /** The prefix that marks a wake now. */
    public String publicPrefix() {
        return this.state.publicPrefix();
    }

    /**
     * The outcome for {@code text} from {@code player}, completing within the verdict timeout
     * (plus scheduling noise) whatever the link does. Never completes exceptionally.
     */
    public CompletableFuture<ChatOutcome> decide(PlayerRef player, Collection<String> granted, String text) {
        LinkState current = this.state;
        boolean prefixed = text.startsWith(current.publicPrefix());
        boolean up = this.link.isUp();
        // While the link is down, listen mode counts as off.
        boolean forward = prefixed || (up && current.forwardAll());
        if (!forward || text.isEmpty() || text.length() > TEXT_MAX) {
            return CompletableFuture.completedFuture(ChatOutcome.untouched(ChatOutcome.Reason.NOT_FORWARDED));
        }
        if (!up) {
            return CompletableFuture.completedFuture(noVerdict(prefixed));
        }
        KeptAsks asks = this.kept;
        if (asks == null || !prefixed) {
            return send(player, granted, text, prefixed, null, this.verdictTimeout);
        }
        // A wake on a link whose bridge has not said yet whether it takes ids waits for that
        // (it follows the handshake at once), a bounded part of the verdict timeout: sent
        // without an id, the bridge's loss would lose it without a word to its asker.
        long started = System.nanoTime();
        long waitMs = Math.min(KeptAsks.STATE_WAIT.toMillis(), this.verdictTimeout.toMillis() / 2);
        return asks.stateKnown().copy().completeOnTimeout(null, waitMs, TimeUnit.MILLISECONDS)
                .thenCompose(known -> {
                    Duration waited = Duration.ofNanos(System.nanoTime() - started);
                    Duration left = this.verdictTimeout.minus(waited);
                    return send(player, granted, text, true, asks, left.isNegative() ? Duration.ofMillis(1) : left);
                });
    }

    private CompletableFuture<ChatOutcome> send(PlayerRef player, Collection<String> granted, String text,
            boolean prefixed, KeptAsks asks, Duration timeout) {
        // The link's own timer ends the wait at the verdict timeout (and then tells the bridge the
        // chat expired), so a verdict is either used or reported late, never both. The margin
        // here only bounds the wait should a link never complete its future.
        JsonObject data = chatData(player, granted, text);
        // A wake the bridge takes is kept until it ends, and sent again after a relink.
        String ask = asks != null ? asks.open(player.uuid(), KeptAsks.Kind.CHAT, data) : null;
        return this.link.request("chat", data, timeout)
                .completeOnTimeout(null, timeout.toMillis() + SAFETY_MARGIN_MS, TimeUnit.MILLISECONDS)
                .handle((answer, error) -> {
                    if (error != null || answer == null) {
                        if (error != null) {
                            this.logger.fine("chat: no verdict for " + player.name() + ": " + error.getMessage());
                        }
                        if (ask != null) {
                            asks.toldNotSent(ask); // the asker is told it was not sent
                        }
                        return noVerdict(prefixed);
                    }
                    ChatOutcome outcome = verdict(answer);
                    if (ask != null) {
                        if (outcome.reason() == ChatOutcome.Reason.ACCEPTED) {
                            asks.accepted(ask);
                        } else {
                            asks.forget(ask);
                        }
                    }
                    return outcome;
                });
    }

    /** {@link #decide} for callers on a thread that may block, such as Paper's async chat event. */
    public ChatOutcome decideBlocking(PlayerRef player, Collection<String> granted, String text) {
        return decide(player, granted, text).join();
    }

    private ChatOutcome noVerdict(boolean prefixed) {
        if (prefixed) {
            return new ChatOutcome(false, false, this.messages.line(Messages.OFFLINE), ChatOutcome.Reason.NO_VERDICT);
        }
        return ChatOutcome.untouched(ChatOutcome.Reason.NO_VERDICT);
    }

    private ChatOutcome verdict(JsonObject answer) {
        JsonElement noticeJson = answer.get("notice");
        Component notice = noticeJson == null || noticeJson.isJsonNull()
                ? null
                : this.renderer.render(Text.fromJson(noticeJson.getAsJsonObject()));
        boolean aiPrefix = answer.get("ai_prefix").getAsBoolean();
        return switch (answer.get("decision").getAsString()) {
            case "accept" -> new ChatOutcome(true, aiPrefix, notice, ChatOutcome.Reason.ACCEPTED);
            case "refuse" -> new ChatOutcome(false, false, notice, ChatOutcome.Reason.REFUSED);
            default -> new ChatOutcome(true, false, notice, ChatOutcome.Reason.PASSED);
        };
    }

    private static JsonObject chatData(PlayerRef player, Collection<String> granted, String text) {
        JsonArray nodes = new JsonArray();
        granted.forEach(nodes::add);
        JsonObject data = new JsonObject();
        data.add("player", player.toJson());
        data.add("granted", nodes);
        data.addProperty("text", text);
        return data;
    }
}
