package dev.mineclaw.core.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.TextComponent;
import net.kyori.adventure.text.format.NamedTextColor;
import net.kyori.adventure.text.format.TextDecoration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TextRendererTest {
    private final TextRenderer renderer = new TextRenderer();

    @Test
    void modelTextCannotCreateClickHoverOrInsertion() {
        String hostile = "<click:run_command:'/op Steve'>free diamonds</click>"
                + "<hover:show_text:'<red>hi'>hover me</hover><insert:/op me>shift-click</insert>"
                + "<key:key.jump><selector:@a><nbt:block:'0 0 0':Items>";
        Component rendered = this.renderer.render(new Text("<answer>", Map.of(), Map.of("answer", hostile)));
        for (Component part : flatten(rendered)) {
            assertNull(part.clickEvent(), "click event in " + part);
            assertNull(part.hoverEvent(), "hover event in " + part);
            assertNull(part.insertion(), "insertion in " + part);
        }
        // The tags stay visible as literal text rather than vanishing silently.
        String plain = TextRenderer.plain(rendered);
        assertTrue(plain.contains("<click:run_command:'/op Steve'>"), plain);
        assertTrue(plain.contains("<insert:/op me>"), plain);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "<key:key.jump>", "<lang:block.minecraft.diamond_block>", "<tr:chat.type.text:a:b>",
        "<lang_or:missing.key:fallback>", "<selector:@a>", "<score:@p:kills>",
        "<nbt:block:'0 0 0':Items>", "<sprite:items:item/diamond>", "<head:Notch>",
        "<font:uniform>x</font>", "<shadow:red>x</shadow>", "<transition:red:blue:0.5>x</transition>",
        "<pride>x</pride>", "<newline>", "<br>", "<insertion:/op me>x</insertion>",
    })
    void modelTextTagsBeyondStylingStayLiteral(String tag) {
        // Tags that fetch or show something (names, scores, sprites, heads, translations) or
        // change layout or font are not the model's to use; each stays visible as typed.
        Component rendered = this.renderer.renderModel("a" + tag + "b");
        assertEquals("a" + tag + "b", TextRenderer.plain(rendered));
        for (Component part : flatten(rendered)) {
            assertInstanceOf(TextComponent.class, part, "only text in " + rendered);
            assertNull(part.font(), "font in " + part);
            assertNull(part.shadowColor(), "shadow in " + part);
        }
    }

    @Test
    void modelTextKeepsColoursAndDecorations() {
        Component rendered = this.renderer.renderModel("<red><bold>hot</bold></red>");
        Component hot = flatten(rendered).stream()
                .filter(part -> TextRenderer.plain(part.children(List.of())).equals("hot"))
                .findFirst().orElseThrow();
        assertEquals(NamedTextColor.RED, hot.color());
        assertEquals(TextDecoration.State.TRUE, hot.decoration(TextDecoration.BOLD));
        assertEquals("rainbow", TextRenderer.plain(this.renderer.renderModel("<rainbow>rainbow</rainbow>")));
        assertEquals("ab", TextRenderer.plain(this.renderer.renderModel("<gradient:red:blue>a</gradient><reset>b")));
    }

    @Test
    void templatesCannotUseInteractiveTagsEvenHiddenInQuotedArguments() {
        // Owner templates are parsed with the restricted template rules: buttons are code-built only.
        for (String template : List.of("<click:run_command:'/mineclaw approve 1'>[Yes]</click>",
                "<click:run_command:'/say <red>'>x</click>", "<hover:show_text:'<b>hi'>x</hover>",
                "<insert:/op>x", "<green><click:suggest_command:/op>x</click></green>")) {
            Component rendered = this.renderer.render(Text.of(template));
            for (Component part : flatten(rendered)) {
                assertNull(part.clickEvent(), template);
                assertNull(part.hoverEvent(), template);
                assertNull(part.insertion(), template);
            }
        }
    }

    @Test
    void lineBreaksInValuesAndModelTextBecomeSpaces() {
        for (String separator : List.of("\n", "\r", "\u000b", "\f", "\u001c", "\u0085", "\u2028", "\u2029")) {
            Component rendered = this.renderer.render(new Text("[AI] <v> <m>",
                    Map.of("v", "a" + separator + "<Notch> hi"), Map.of("m", "b" + separator + "[Server] x")));
            assertEquals("[AI] a <Notch> hi b [Server] x", TextRenderer.plain(rendered));
        }
    }

    @Test
    void valuesAreInsertedAsPlainTextUnparsed() {
        Component rendered = this.renderer.render(new Text("<gray><name></gray> says hi",
                Map.of("name", "<click:run_command:/op>Steve</click><red>"), Map.of()));
        assertEquals("<click:run_command:/op>Steve</click><red> says hi", TextRenderer.plain(rendered));
        for (Component part : flatten(rendered)) {
            assertNull(part.clickEvent());
            assertFalse(part.color() == NamedTextColor.RED, "a value must not colour anything");
        }
    }

    @Test
    void sectionSignIsRemovedEverywhere() {
        Component rendered = this.renderer.render(new Text("\u00a7a<v> <m>", Map.of("v", "\u00a7cvalue"),
                Map.of("m", "\u00a7lmodel")));
        String plain = TextRenderer.plain(rendered);
        assertFalse(plain.contains("\u00a7"), plain);
        assertEquals("acvalue lmodel", plain);
    }

    @Test
    void lengthIsCappedWithoutSplittingASurrogatePair() {
        String astral = "\uD83D\uDE00";
        String longText = "a" + astral.repeat(TextRenderer.VALUE_MAX);
        String capped = TextRenderer.clean(longText, TextRenderer.VALUE_MAX);
        assertTrue(capped.length() <= TextRenderer.VALUE_MAX);
        assertFalse(Character.isHighSurrogate(capped.charAt(capped.length() - 1)));
        assertEquals(2048, TextRenderer.plain(this.renderer.render(Text.of("x".repeat(5000)))).length());
    }

    @Test
    void messagesRegistryRendersDefaultsAndOverrides() {
        Messages defaults = Messages.defaults(this.renderer);
        assertTrue(TextRenderer.plain(defaults.line(Messages.OFFLINE)).contains("offline"));
        Messages custom = new Messages(Map.of(Messages.COMMAND_NO_PERMISSION, "nope: <node>"), this.renderer);
        assertEquals("nope: <b>x</b>",
                TextRenderer.plain(custom.line(Messages.COMMAND_NO_PERMISSION, Map.of("node", "<b>x</b>"))));
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> new Messages(Map.of("chat.nonsense", "x"), this.renderer));
        assertTrue(unknown.getMessage().contains("chat.nonsense"));
        assertNotNull(defaults.line(Messages.AI_PREFIX));
    }

    static List<Component> flatten(Component root) {
        List<Component> all = new ArrayList<>();
        List<Component> todo = new ArrayList<>(List.of(root));
        while (!todo.isEmpty()) {
            Component next = todo.remove(todo.size() - 1);
            all.add(next);
            todo.addAll(next.children());
        }
        return all;
    }
}
