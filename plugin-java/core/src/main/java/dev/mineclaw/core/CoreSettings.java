package dev.mineclaw.core;

import dev.mineclaw.core.link.LinkSettings;
import dev.mineclaw.core.link.TokenSource;
import dev.mineclaw.core.text.Messages;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Everything the core is configured with. Immutable.
 *
 * @param link how to reach the bridge
 * @param tokens where the shared token comes from
 * @param instanceId this server start's id; a new one on every start
 * @param verdictTimeout how long a chat message may wait for its verdict (250 ms by default)
 * @param defaultPrefix the wake prefix until the bridge names one ({@code "@ai"} by default)
 * @param messages overrides of the plugin's own lines, key to MiniMessage template
 * @param locale the shipped set of the plugin's own lines under the overrides (one of
 *     {@link dev.mineclaw.core.text.Messages#LOCALES}, {@code en} by default)
 * @param features feature flags announced in {@code hello}
 * @param serverId the server id announced in {@code hello} (empty: the bridge's default server)
 */
public record CoreSettings(LinkSettings link, TokenSource tokens, UUID instanceId, Duration verdictTimeout,
        String defaultPrefix, Map<String, String> messages, List<String> features, String serverId, String locale) {
    public static final Duration DEFAULT_VERDICT_TIMEOUT = Duration.ofMillis(250);
    public static final String DEFAULT_PREFIX = "@ai";
    /**
     * A question the bridge took and had not ended when the link dropped is sent again after the
     * relink only when it is not older than this; otherwise its asker is told it was not delivered.
     */
    public static final Duration ASK_MAX_AGE = Duration.ofSeconds(60);
    public static final List<String> DEFAULT_FEATURES = List.of(
            "chat", "command", "output.chat", "output.actionbar", "players.list", "command.dispatch", "snapshots",
            "approvals", "gestures", "budgets", "command.resolve", "report_nodes");

    public CoreSettings {
        Objects.requireNonNull(link, "link");
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(instanceId, "instanceId");
        if (verdictTimeout.isNegative() || verdictTimeout.isZero()) {
            throw new IllegalArgumentException("the verdict timeout must be positive, got " + verdictTimeout);
        }
        if (defaultPrefix.isEmpty() || defaultPrefix.length() > 32) {
            throw new IllegalArgumentException("the default prefix must be 1-32 characters");
        }
        messages = Map.copyOf(messages);
        features = List.copyOf(features);
        Objects.requireNonNull(serverId, "serverId");
        Objects.requireNonNull(locale, "locale");
    }

    /** Defaults for everything but where the bridge is, the token and the instance id. */
    public static CoreSettings defaults(LinkSettings link, TokenSource tokens, UUID instanceId) {
        return new CoreSettings(link, tokens, instanceId, DEFAULT_VERDICT_TIMEOUT, DEFAULT_PREFIX, Map.of(),
                DEFAULT_FEATURES, "", Messages.ENGLISH);
    }

    /** How old a kept question may be to be sent again after a relink ({@link #ASK_MAX_AGE}). */
    public Duration askMaxAge() {
        return ASK_MAX_AGE;
    }

    public CoreSettings withVerdictTimeout(Duration timeout) {
        return new CoreSettings(this.link, this.tokens, this.instanceId, timeout, this.defaultPrefix, this.messages,
                this.features, this.serverId, this.locale);
    }

    public CoreSettings withServerId(String id) {
        return new CoreSettings(this.link, this.tokens, this.instanceId, this.verdictTimeout, this.defaultPrefix,
                this.messages, this.features, id, this.locale);
    }

    /** The plugin's own lines: the {@code locale} set with {@code overrides} on top. */
    public CoreSettings withMessages(String newLocale, Map<String, String> overrides) {
        return new CoreSettings(this.link, this.tokens, this.instanceId, this.verdictTimeout, this.defaultPrefix,
                overrides, this.features, this.serverId, newLocale);
    }
}
