package dev.mineclaw.core.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The plugin's own lines: two shipped sets with the same keys and placeholders, both valid. */
class MessagesTest {
    private final TextRenderer renderer = new TextRenderer();

    @Test
    void everySetHasExactlyTheKeysAndPlaceholdersOfEnglish() {
        Map<String, String> english = Messages.set(Messages.ENGLISH);
        for (String locale : Messages.LOCALES) {
            Map<String, String> lines = Messages.set(locale);
            assertEquals(english.keySet(), lines.keySet(), locale);
            for (Map.Entry<String, String> line : lines.entrySet()) {
                Set<String> allowed = Messages.placeholders(line.getKey());
                assertEquals(TemplateRules.placeholdersUsed(english.get(line.getKey()), allowed),
                        TemplateRules.placeholdersUsed(line.getValue(), allowed), locale + " " + line.getKey());
            }
        }
    }

    @Test
    void everyShippedLineKeepsTheTemplateRules() {
        for (String locale : Messages.LOCALES) {
            Messages.set(locale).forEach((key, template) ->
                    assertNull(Messages.problem(key, template), locale + " " + key));
        }
    }

    @Test
    void theLocaleChoosesTheSetAndOverridesGoOnTop() {
        Messages chinese = new Messages(Messages.SIMPLIFIED_CHINESE, Map.of(), this.renderer);
        String offline = TextRenderer.plain(chinese.line(Messages.OFFLINE));
        assertTrue(offline.contains("助手当前离线"), offline);
        assertNotEquals(offline, TextRenderer.plain(Messages.defaults(this.renderer).line(Messages.OFFLINE)));
        Messages custom = new Messages(Messages.SIMPLIFIED_CHINESE,
                Map.of(Messages.AI_PREFIX, "<gold>[机器人]</gold> "), this.renderer);
        assertEquals("[机器人] ", TextRenderer.plain(custom.line(Messages.AI_PREFIX)));
        assertEquals(offline, TextRenderer.plain(custom.line(Messages.OFFLINE)));
        String tooMany = TextRenderer.plain(chinese.line(Messages.COMMAND_TOO_MANY_ARGS, Map.of("max", "16")));
        assertEquals("命令太长：最多 16 个参数。", tooMany);
    }

    @Test
    void anUnknownLocaleOrABadOverrideIsRefusedByName() {
        IllegalArgumentException locale = assertThrows(IllegalArgumentException.class,
                () -> new Messages("fr", Map.of(), this.renderer));
        assertTrue(locale.getMessage().contains("'fr'") && locale.getMessage().contains("zh_CN"), locale.getMessage());
        IllegalArgumentException hover = assertThrows(IllegalArgumentException.class, () -> new Messages(
                Messages.SIMPLIFIED_CHINESE, Map.of(Messages.OFFLINE, "<hover:show_text:'x'>离线</hover>"),
                this.renderer));
        assertTrue(hover.getMessage().contains(Messages.OFFLINE) && hover.getMessage().contains("hover"),
                hover.getMessage());
        // A placeholder another line has is not one this line may use.
        assertTrue(Messages.problem(Messages.OFFLINE, "<gray>offline (<node>)").contains("<node>"));
    }
}
