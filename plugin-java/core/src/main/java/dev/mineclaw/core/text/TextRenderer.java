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
 * Renders {@link Text}. The template is the owner's and may use every MiniMessage tag; values are
 * inserted as plain text; model text goes through a restricted parser that knows only colours,
 * decorations, reset, gradient and rainbow, so a model cannot produce click, hover, insertion or
 * any other interactive tag: such tags stay visible as literal text.
 */
public final class TextRenderer {
    /** Bounds beyond the protocol's, for text that did not come over the wire. */
    public static final int TEMPLATE_MAX = 2048;
    public static final int VALUE_MAX = 8192;

    private final MiniMessage trusted = MiniMessage.miniMessage();
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
            placeholders.add(Placeholder.unparsed(value.getKey(), clean(value.getValue(), VALUE_MAX)));
        }
        for (Map.Entry<String, String> model : text.model().entrySet()) {
            placeholders.add(Placeholder.component(model.getKey(), renderModel(model.getValue())));
        }
        return this.trusted.deserialize(clean(text.template(), TEMPLATE_MAX), TagResolver.resolver(placeholders));
    }

    /** Model-written MiniMessage through the restricted parser. */
    public Component renderModel(String modelText) {
        return this.restricted.deserialize(clean(modelText, VALUE_MAX));
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
