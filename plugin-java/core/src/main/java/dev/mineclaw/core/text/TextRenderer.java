package dev.mineclaw.core.text;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.minimessage.MiniMessage;
import net.kyori.adventure.text.minimessage.tag.resolver.Placeholder;
import net.kyori.adventure.text.minimessage.tag.resolver.TagResolver;
import net.kyori.adventure.text.minimessage.tag.standard.StandardTags;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;

/**
 * Renders {@link Text}. The template is the owner's and is parsed with the restricted template
 * rules ({@link TemplateRules}: style tags and its placeholders only), so no template can make a
 * click, hover, insertion or any other interactive part, even one hidden in a quoted argument;
 * such tags stay literal text. Values are inserted as plain text; model text goes through a
 * restricted parser that knows only colours, decorations, reset, gradient and rainbow. Line
 * breaks in values and model text become spaces: one Text is one chat line. Buttons are built
 * by code ({@code ApprovalPrompt}), never by a template.
 */
public final class TextRenderer {
    /** Bounds beyond the protocol's, for text that did not come over the wire. */
    public static final int TEMPLATE_MAX = 2048;
    public static final int VALUE_MAX = 8192;

    private final MiniMessage templates = MiniMessage.builder().tags(TemplateRules.STYLES).build();
    private final MiniMessage restricted = MiniMessage.builder()
            .tags(TagResolver.resolver(
                    StandardTags.color(),
                    StandardTags.decorations(),
                    StandardTags.reset(),
                    StandardTags.gradient(),
                    StandardTags.rainbow()))
            .build();

    /** The component for {@code text}. */
    public Component render(Text text) {
        List<TagResolver> placeholders = new ArrayList<>();
        for (Map.Entry<String, String> value : text.values().entrySet()) {
            placeholders.add(Placeholder.unparsed(value.getKey(), oneLine(clean(value.getValue(), VALUE_MAX))));
        }
        for (Map.Entry<String, String> model : text.model().entrySet()) {
            placeholders.add(Placeholder.component(model.getKey(), renderModel(model.getValue())));
        }
        return this.templates.deserialize(clean(text.template(), TEMPLATE_MAX), TagResolver.resolver(placeholders));
    }

    /** Model-written MiniMessage through the restricted parser. */
    public Component renderModel(String modelText) {
        return this.restricted.deserialize(oneLine(clean(modelText, VALUE_MAX)));
    }

    /**
     * {@code raw} with every line-breaking character (CR, LF, VT, FF, the information separators,
     * NEL, U+2028, U+2029) as a space, so a value cannot start a chat line of its own.
     */
    static String oneLine(String raw) {
        StringBuilder out = null;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            boolean breaks = c == '\n' || c == '\r' || c == '\u000b' || c == '\f' || (c >= '\u001c' && c <= '\u001e')
                    || c == '\u0085' || c == '\u2028' || c == '\u2029';
            if (breaks && out == null) {
                out = new StringBuilder(raw.length()).append(raw, 0, i);
            }
            if (out != null) {
                out.append(breaks ? ' ' : c);
            }
        }
        return out == null ? raw : out.toString();
    }

    /** What a player would read, without styling. */
    public static String plain(Component component) {
        return PlainTextComponentSerializer.plainText().serialize(component);
    }

    /** Drops legacy {@code §} colour codes, which clients still honour, and caps the length. */
    static String clean(String raw, int max) {
        String withoutSection = raw.indexOf('\u00a7') < 0 ? raw : raw.replace("\u00a7", "");
        if (withoutSection.length() <= max) {
            return withoutSection;
        }
        int end = max;
        if (Character.isHighSurrogate(withoutSection.charAt(end - 1))) {
            end--;
        }
        return withoutSection.substring(0, end);
    }
}
