package dev.mineclaw.core.text;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Text to render (the protocol's Text shape): a trusted MiniMessage template, plain values and
 * model-written MiniMessage, each filling a {@code <name>} placeholder. Immutable.
 */
public record Text(String template, Map<String, String> values, Map<String, String> model) {
    public Text {
        Objects.requireNonNull(template, "template");
        values = Map.copyOf(values);
        model = Map.copyOf(model);
    }

    /** A template without placeholders. */
    public static Text of(String template) {
        return new Text(template, Map.of(), Map.of());
    }

    /** Reads a Text the codec has already validated. */
    public static Text fromJson(JsonObject json) {
        return new Text(json.get("template").getAsString(), strings(json.get("values")), strings(json.get("model")));
    }

    private static Map<String, String> strings(JsonElement element) {
        if (element == null || !element.isJsonObject()) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonElement> entry : element.getAsJsonObject().entrySet()) {
            out.put(entry.getKey(), entry.getValue().getAsString());
        }
        return out;
    }
}
