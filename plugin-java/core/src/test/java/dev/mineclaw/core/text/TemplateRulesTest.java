package dev.mineclaw.core.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.Vectors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import net.kyori.adventure.text.Component;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The template cases shared with the bridge's pytest suite (docs/protocol/vectors/templates). */
class TemplateRulesTest {
    private final TextRenderer renderer = new TextRenderer();

    static Stream<Arguments> cases() {
        JsonObject file = Vectors.read(Vectors.folder().resolve("templates").resolve("message-templates.json"));
        List<Arguments> out = new ArrayList<>();
        for (JsonElement element : file.getAsJsonArray("cases")) {
            JsonObject item = element.getAsJsonObject();
            out.add(Arguments.of(item.get("name").getAsString(), item.get("template").getAsString(),
                    strings(item, "placeholders"), strings(item, "required"), item.get("valid").getAsBoolean()));
        }
        return out.stream();
    }

    private static Set<String> strings(JsonObject item, String key) {
        Set<String> out = new LinkedHashSet<>();
        item.getAsJsonArray(key).forEach(value -> out.add(value.getAsString()));
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void sharedCaseIsJudgedAsTheBridgeJudgesIt(String name, String template, Set<String> placeholders,
            Set<String> required, boolean valid) {
        String problem = TemplateRules.problem(template, placeholders, required);
        assertEquals(valid, problem == null, name + ": " + problem);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void noSharedCaseRendersAClickHoverOrInsertion(String name, String template, Set<String> placeholders,
            Set<String> required, boolean valid) {
        Map<String, String> values = new HashMap<>();
        for (String placeholder : placeholders) {
            values.put(placeholder, "v");
        }
        Component rendered = this.renderer.render(new Text(template, values, Map.of()));
        for (Component part : TextRendererTest.flatten(rendered)) {
            assertNull(part.clickEvent(), name + ": click in " + rendered);
            assertNull(part.hoverEvent(), name + ": hover in " + rendered);
            assertNull(part.insertion(), name + ": insertion in " + rendered);
        }
    }

    @Test
    void pluginMessageOverridesAreCheckedWithTheSameRules() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new Messages(
                Map.of(Messages.OFFLINE, "<click:run_command:'/say <red>'>offline</click>"), this.renderer));
        assertTrue(refused.getMessage().contains(Messages.OFFLINE) && refused.getMessage().contains("click"),
                refused.getMessage());
        new Messages(Map.of(Messages.COMMAND_FAILED, "<red>failed (<code>)</red>"), this.renderer);
    }
}
