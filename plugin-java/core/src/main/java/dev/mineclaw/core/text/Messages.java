package dev.mineclaw.core.text;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import net.kyori.adventure.text.Component;

/**
 * The plugin's own user-facing lines, in one place. Each is a MiniMessage template an owner may
 * override from the plugin config; placeholders are filled as plain text.
 */
public final class Messages {
    /** The public prefix put before a chat line the assistant accepted as a wake. */
    public static final String AI_PREFIX = "chat.ai-prefix";
    /** Private line for a wake while the assistant cannot be reached. */
    public static final String OFFLINE = "assistant.offline";
    /** {@code /mineclaw} while the link is down. */
    public static final String COMMAND_OFFLINE = "command.offline";
    /** {@code /mineclaw} refused by the plugin's own permission check; {@code <node>}. */
    public static final String COMMAND_NO_PERMISSION = "command.no-permission";
    /** {@code /mineclaw} with arguments the protocol cannot carry; {@code <reason>}. */
    public static final String COMMAND_BAD_ARGS = "command.bad-arguments";
    /** {@code /mineclaw} that the bridge did not answer in time. */
    public static final String COMMAND_TIMEOUT = "command.timeout";
    /** {@code /mineclaw} that the bridge refused with an error; {@code <code>}. */
    public static final String COMMAND_FAILED = "command.failed";

    private static final Map<String, String> DEFAULTS = Map.of(
            AI_PREFIX, "<dark_aqua>[AI]</dark_aqua> ",
            OFFLINE, "<gray>The assistant is offline right now; your message was not sent.</gray>",
            COMMAND_OFFLINE, "<red>The assistant is offline right now.</red>",
            COMMAND_NO_PERMISSION, "<red>You do not have permission to do that (<node>).</red>",
            COMMAND_BAD_ARGS, "<red>That command is too long: <reason>.</red>",
            COMMAND_TIMEOUT, "<red>The assistant did not answer in time.</red>",
            COMMAND_FAILED, "<red>The assistant could not run that command (<code>).</red>");

    /** The placeholders each line is rendered with. */
    private static final Map<String, Set<String>> PLACEHOLDERS = Map.of(
            COMMAND_NO_PERMISSION, Set.of("node"),
            COMMAND_BAD_ARGS, Set.of("reason"),
            COMMAND_FAILED, Set.of("code"));

    private final Map<String, String> templates;
    private final TextRenderer renderer;

    /** The default lines with {@code overrides} (key to template) on top; unknown keys are refused. */
    public Messages(Map<String, String> overrides, TextRenderer renderer) {
        Map<String, String> merged = new HashMap<>(DEFAULTS);
        for (Map.Entry<String, String> entry : overrides.entrySet()) {
            if (!DEFAULTS.containsKey(entry.getKey())) {
                throw new IllegalArgumentException("unknown message key '" + entry.getKey() + "'; known: "
                        + DEFAULTS.keySet());
            }
            String problem = TemplateRules.problem(entry.getValue(), PLACEHOLDERS.getOrDefault(entry.getKey(), Set.of()),
                    Set.of());
            if (problem != null) {
                throw new IllegalArgumentException("message '" + entry.getKey() + "': " + problem);
            }
            merged.put(entry.getKey(), entry.getValue());
        }
        this.templates = Map.copyOf(merged);
        this.renderer = renderer;
    }

    /** The defaults only. */
    public static Messages defaults(TextRenderer renderer) {
        return new Messages(Map.of(), renderer);
    }

    /** The line {@code key} with {@code values} as plain-text placeholders. */
    public Component line(String key, Map<String, String> values) {
        String template = this.templates.get(key);
        if (template == null) {
            throw new IllegalArgumentException("unknown message key '" + key + "'");
        }
        return this.renderer.render(new Text(template, values, Map.of()));
    }

    public Component line(String key) {
        return line(key, Map.of());
    }
}
