package dev.mineclaw.core.text;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.minimessage.Context;
import net.kyori.adventure.text.minimessage.MiniMessage;
import net.kyori.adventure.text.minimessage.tag.Tag;
import net.kyori.adventure.text.minimessage.tag.resolver.ArgumentQueue;
import net.kyori.adventure.text.minimessage.tag.resolver.TagResolver;
import net.kyori.adventure.text.minimessage.tag.standard.StandardTags;

/**
 * The restricted MiniMessage of message templates: style tags (colours, decorations, reset,
 * gradient, rainbow; arguments only where they take them, never quoted) and the placeholders a
 * template declares. The bridge checks {@code message.yml} with the same rules
 * ({@code bridge/control/template_rules.py}); the cases both must agree on are the files in
 * {@code docs/protocol/vectors/templates/}.
 *
 * <p>The check asks MiniMessage's own lexer which tags a template holds, through a resolver that
 * records every tag name it is asked about, so a tag hidden in a quoted argument of another tag
 * is seen exactly as the renderer would see it.
 */
public final class TemplateRules {
    static final Set<String> COLOURS = Set.of("black", "dark_blue", "dark_green", "dark_aqua", "dark_red",
            "dark_purple", "gold", "gray", "grey", "dark_gray", "dark_grey", "blue", "green", "aqua", "red",
            "light_purple", "yellow", "white");
    static final Set<String> DECORATIONS = Set.of("bold", "b", "italic", "i", "em", "underlined", "u",
            "strikethrough", "st", "obfuscated", "obf", "reset");
    static final Set<String> WITH_ARGUMENT = Set.of("color", "colour", "c", "gradient", "rainbow");
    private static final Pattern HEX = Pattern.compile("#[0-9a-fA-F]{6}");
    private static final Pattern ARGUMENT = Pattern.compile("#[0-9a-fA-F]{6}|[a-z_]+");

    /** The style tags a template may use, as a resolver for rendering. */
    public static final TagResolver STYLES = TagResolver.resolver(
            StandardTags.color(),
            StandardTags.decorations(),
            StandardTags.reset(),
            StandardTags.gradient(),
            StandardTags.rainbow());

    private TemplateRules() {}

    /**
     * Why {@code template} breaks the rules, or null when it keeps them.
     *
     * @param placeholders the {@code <name>} placeholders the template may use
     * @param required those it must use
     */
    public static String problem(String template, Set<String> placeholders, Set<String> required) {
        Recorder recorder = new Recorder(placeholders);
        MiniMessage.builder().tags(recorder).build().deserialize(template);
        if (!recorder.refused.isEmpty()) {
            return "<" + recorder.refused.get(0) + "> is not a style tag or a placeholder here (placeholders: "
                    + placeholders.stream().sorted().map(name -> "<" + name + ">").toList() + ")";
        }
        for (String name : required.stream().sorted().toList()) {
            if (!recorder.used.contains(name)) {
                return "must contain <" + name + ">";
            }
        }
        return null;
    }

    /** The placeholders of {@code placeholders} that {@code template} uses, as MiniMessage finds them. */
    public static Set<String> placeholdersUsed(String template, Set<String> placeholders) {
        Recorder recorder = new Recorder(placeholders);
        MiniMessage.builder().tags(recorder).build().deserialize(template);
        return Set.copyOf(recorder.used);
    }

    /** Answers every tag name, records it, and refuses (as a parse error) what the rules refuse. */
    private static final class Recorder implements TagResolver {
        private final Set<String> placeholders;
        private final List<String> refused = new ArrayList<>();
        private final Set<String> used = new HashSet<>();

        Recorder(Set<String> placeholders) {
            this.placeholders = placeholders;
        }

        @Override
        public boolean has(String name) {
            return true;
        }

        @Override
        public Tag resolve(String name, ArgumentQueue arguments, Context ctx) {
            String lower = name.toLowerCase(Locale.ROOT);
            List<String> values = new ArrayList<>();
            while (arguments.hasNext()) {
                values.add(arguments.pop().value());
            }
            String shown = values.isEmpty() ? name : name + ":" + String.join(":", values);
            boolean allowed;
            if (this.placeholders.contains(name)) {
                allowed = values.isEmpty();
                this.used.add(name);
            } else if (COLOURS.contains(lower) || DECORATIONS.contains(lower) || HEX.matcher(name).matches()) {
                allowed = values.isEmpty();
            } else if (WITH_ARGUMENT.contains(lower)) {
                allowed = values.stream().allMatch(value -> ARGUMENT.matcher(value).matches());
            } else {
                allowed = false;
            }
            if (!allowed) {
                this.refused.add(shown);
            }
            return Tag.selfClosingInserting(Component.empty());
        }
    }
}
