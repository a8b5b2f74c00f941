package dev.mineclaw.testkit;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.text.TextRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.event.ClickEvent;
import net.kyori.adventure.text.event.HoverEvent;

/**
 * Reports a chat message that carries click events as an {@code approval} event (CONTROL.md): the
 * prompt's plain text and every clickable part, so a test sees exactly what a player could click,
 * injected parts included.
 */
final class PromptEvents {
    private PromptEvents() {}

    /** The approval event for {@code message} to {@code to}, or null when nothing in it is clickable. */
    static JsonObject approval(String to, Component message) {
        List<Component> clickable = new ArrayList<>();
        collect(message, clickable);
        if (clickable.isEmpty()) {
            return null;
        }
        JsonArray buttons = new JsonArray();
        for (Component part : clickable) {
            ClickEvent click = part.clickEvent();
            JsonObject button = new JsonObject();
            button.addProperty("label", TextRenderer.plain(part));
            HoverEvent<?> hover = part.hoverEvent();
            if (hover != null && hover.value() instanceof Component shown) {
                button.addProperty("hover", TextRenderer.plain(shown));
            } else {
                button.add("hover", JsonNull.INSTANCE);
            }
            button.addProperty("action", click.action().name().toLowerCase(Locale.ROOT));
            // Adventure 4 (the API the plugin compiles against) keeps what a click carries as text.
            button.addProperty("command", click.value());
            buttons.add(button);
        }
        JsonObject event = EventOut.event("approval");
        event.addProperty("to", to);
        // The core sends prompt, new line, buttons: the prompt is what precedes the last new line.
        String plain = TextRenderer.plain(message);
        int lastBreak = plain.lastIndexOf('\n');
        event.addProperty("text", lastBreak < 0 ? plain : plain.substring(0, lastBreak));
        event.add("buttons", buttons);
        return event;
    }

    private static void collect(Component part, List<Component> clickable) {
        if (part.clickEvent() != null) {
            clickable.add(part);
        }
        HoverEvent<?> hover = part.hoverEvent();
        if (hover != null && hover.value() instanceof Component shown) {
            collect(shown, clickable);
        }
        part.children().forEach(child -> collect(child, clickable));
    }
}
