package dev.mineclaw.core.text;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import net.kyori.adventure.text.Component;

/**
 * The plugin's own user-facing lines, in one place: the lines it shows without the bridge (the AI
 * prefix, "assistant offline", its {@code /mineclaw} errors). Two sets ship, English and
 * Simplified Chinese, with the same keys and placeholders; the plugin config picks one
 * ({@code locale}) and may override any line ({@code messages}). Every line is a MiniMessage
 * template checked with {@link TemplateRules}, the rules of the bridge's {@code message.yml};
 * placeholders are filled as plain text.
 */
public final class Messages {
    /** The public prefix put before a chat line the assistant accepted as a wake. */
    public static final String AI_PREFIX = "chat.ai-prefix";
    /** Private line for a wake while the assistant cannot be reached. */
    public static final String OFFLINE = "assistant.offline";
    /**
     * Private line for a question the plugin kept after its bridge's link dropped and could not
     * send again (too old, sent again once already, or a bridge that does not take question ids).
     */
    public static final String NOT_DELIVERED = "assistant.not-delivered";
    /** {@code /mineclaw} while the link is down. */
    public static final String COMMAND_OFFLINE = "command.offline";
    /** {@code /mineclaw} refused by the plugin's own permission check; {@code <node>}. */
    public static final String COMMAND_NO_PERMISSION = "command.no-permission";
    /** {@code /mineclaw} with more arguments than the protocol carries; {@code <max>}. */
    public static final String COMMAND_TOO_MANY_ARGS = "command.too-many-arguments";
    /** {@code /mineclaw} with an argument the protocol cannot carry; {@code <max>} characters. */
    public static final String COMMAND_ARG_LENGTH = "command.argument-length";
    /** {@code /mineclaw} that the bridge did not answer in time. */
    public static final String COMMAND_TIMEOUT = "command.timeout";
    /** {@code /mineclaw} that the bridge refused with an error; {@code <code>}. */
    public static final String COMMAND_FAILED = "command.failed";

    public static final String ENGLISH = "en";
    public static final String SIMPLIFIED_CHINESE = "zh_CN";
    /** The shipped sets, by locale. */
    public static final List<String> LOCALES = List.of(ENGLISH, SIMPLIFIED_CHINESE);

    private static final Map<String, String> EN = Map.of(
            AI_PREFIX, "<dark_aqua>[AI]</dark_aqua> ",
            OFFLINE, "<gray>The assistant is offline right now; your message was not sent.</gray>",
            NOT_DELIVERED, "<gray>Your question was not delivered: the assistant's connection dropped"
                    + " before it answered. Please ask again.</gray>",
            COMMAND_OFFLINE, "<red>The assistant is offline right now.</red>",
            COMMAND_NO_PERMISSION, "<red>You do not have permission to do that (<node>).</red>",
            COMMAND_TOO_MANY_ARGS, "<red>That command is too long: at most <max> arguments.</red>",
            COMMAND_ARG_LENGTH, "<red>That command is too long: each argument must be 1-<max> characters.</red>",
            COMMAND_TIMEOUT, "<red>The assistant did not answer in time.</red>",
            COMMAND_FAILED, "<red>The assistant could not run that command (<code>).</red>");

    private static final Map<String, String> ZH_CN = Map.of(
            AI_PREFIX, "<dark_aqua>[AI]</dark_aqua> ",
            OFFLINE, "<gray>助手当前离线，你的消息没有发送。</gray>",
            NOT_DELIVERED, "<gray>你的问题没有送达：助手在回答前断开了连接。请重新提问。</gray>",
            COMMAND_OFFLINE, "<red>助手当前离线。</red>",
            COMMAND_NO_PERMISSION, "<red>你没有权限执行此操作（<node>）。</red>",
            COMMAND_TOO_MANY_ARGS, "<red>命令太长：最多 <max> 个参数。</red>",
            COMMAND_ARG_LENGTH, "<red>命令太长：每个参数须为 1-<max> 个字符。</red>",
            COMMAND_TIMEOUT, "<red>助手没有及时回应。</red>",
            COMMAND_FAILED, "<red>助手无法执行该命令（<code>）。</red>");

    private static final Map<String, Map<String, String>> SETS = Map.of(ENGLISH, EN, SIMPLIFIED_CHINESE, ZH_CN);

    /** The placeholders each line is rendered with (every one of them may be used, none must). */
    static final Map<String, Set<String>> PLACEHOLDERS = Map.of(
            COMMAND_NO_PERMISSION, Set.of("node"),
            COMMAND_TOO_MANY_ARGS, Set.of("max"),
            COMMAND_ARG_LENGTH, Set.of("max"),
            COMMAND_FAILED, Set.of("code"));

    private final Map<String, String> templates;
    private final TextRenderer renderer;

    /**
     * The {@code locale} set with {@code overrides} (key to template) on top.
     *
     * @throws IllegalArgumentException naming an unknown locale or key, or a line that breaks the
     *     template rules
     */
    public Messages(String locale, Map<String, String> overrides, TextRenderer renderer) {
        Map<String, String> merged = new HashMap<>(set(locale));
        for (Map.Entry<String, String> entry : overrides.entrySet()) {
            if (!EN.containsKey(entry.getKey())) {
                throw new IllegalArgumentException("unknown message key '" + entry.getKey() + "'; known: "
                        + new TreeSet<>(EN.keySet()));
            }
            String problem = problem(entry.getKey(), entry.getValue());
            if (problem != null) {
                throw new IllegalArgumentException("message '" + entry.getKey() + "': " + problem);
            }
            merged.put(entry.getKey(), entry.getValue());
        }
        this.templates = Map.copyOf(merged);
        this.renderer = renderer;
    }

    /** The English set with {@code overrides} on top. */
    public Messages(Map<String, String> overrides, TextRenderer renderer) {
        this(ENGLISH, overrides, renderer);
    }

    /** The English defaults only. */
    public static Messages defaults(TextRenderer renderer) {
        return new Messages(Map.of(), renderer);
    }

    /** Every line of a shipped set, by key, in key order. */
    public static Map<String, String> set(String locale) {
        Map<String, String> lines = SETS.get(locale);
        if (lines == null) {
            throw new IllegalArgumentException("unknown locale '" + locale + "'; known: " + LOCALES);
        }
        Map<String, String> ordered = new LinkedHashMap<>();
        new TreeSet<>(lines.keySet()).forEach(key -> ordered.put(key, lines.get(key)));
        return ordered;
    }

    /** The placeholders line {@code key} may use. */
    public static Set<String> placeholders(String key) {
        return PLACEHOLDERS.getOrDefault(key, Set.of());
    }

    /** Why {@code template} may not be line {@code key}, or null when it may. */
    public static String problem(String key, String template) {
        return TemplateRules.problem(template, placeholders(key), Set.of());
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
