package dev.mineclaw.core.approval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.event.ClickEvent;
import net.kyori.adventure.text.event.HoverEvent;
import net.kyori.adventure.text.format.NamedTextColor;
import org.junit.jupiter.api.Test;

class ApprovalPromptTest {
    private static final String TOKEN = "q3x7Yh2L0vT9sKd8Wm4nPa";
    private static final String HOSTILE = "<click:run_command:'/op Steve'>free diamonds</click>"
            + "<insert:/op Steve>shift-click me</insert><click:suggest_command:'/op Steve'>x</click>";

    private final ApprovalPrompt prompts = new ApprovalPrompt(new TextRenderer());

    /** Every component of the tree in reading order, hover texts included. */
    private static List<Component> flatten(Component root) {
        List<Component> all = new ArrayList<>();
        collect(root, all);
        return all;
    }

    private static void collect(Component part, List<Component> all) {
        all.add(part);
        HoverEvent<?> hover = part.hoverEvent();
        if (hover != null && hover.value() instanceof Component shown) {
            collect(shown, all);
        }
        part.children().forEach(child -> collect(child, all));
    }

    private static List<String> clicks(Component root) {
        List<String> commands = new ArrayList<>();
        for (Component part : flatten(root)) {
            ClickEvent click = part.clickEvent();
            if (click != null) {
                assertEquals(ClickEvent.Action.RUN_COMMAND, click.action());
                // Adventure 4 (what the core compiles against) keeps the command as the value.
                commands.add(click.value());
            }
            assertNull(part.insertion(), "insertion in " + part);
        }
        return commands;
    }

    private static ApprovalPrompt.Button button(String answer, String option) {
        return new ApprovalPrompt.Button(Text.of("[" + answer + "]"), Text.of("hover " + answer), answer, option);
    }

    @Test
    void theButtonsRunTheAnswerCommandsBuiltByCode() {
        Component prompt = this.prompts.render(Text.of("<gold>Alex</gold> asks"),
                List.of(button("approve", null), button("approve", "always"), button("deny", null)), TOKEN);
        assertEquals(List.of("/mineclaw approve " + TOKEN, "/mineclaw approve " + TOKEN + " always",
                "/mineclaw deny " + TOKEN), clicks(prompt));
        assertEquals("Alex asks\n[approve] [approve] [deny]", TextRenderer.plain(prompt));
    }

    @Test
    void noTextCanAddAClickEventOrInsertion() {
        Text everywhere = new Text("<prompt> " + HOSTILE, Map.of("prompt", HOSTILE), Map.of("model", HOSTILE));
        Text withModel = new Text("<model> <prompt>", Map.of("prompt", HOSTILE), Map.of("model", HOSTILE));
        ApprovalPrompt.Button hostileButton = new ApprovalPrompt.Button(everywhere, withModel, "deny", null);
        Component prompt = this.prompts.render(withModel, List.of(hostileButton), TOKEN);
        assertEquals(List.of("/mineclaw deny " + TOKEN), clicks(prompt));
        // The values stay literal text for the player to read.
        assertTrue(TextRenderer.plain(prompt).contains("<click:run_command:'/op Steve'>"), TextRenderer.plain(prompt));
    }

    @Test
    void clickEventsAlreadyInAComponentTreeAreStrippedAtEveryDepth() {
        Component nested = Component.text("a")
                .clickEvent(ClickEvent.runCommand("/op a"))
                .append(Component.text("b").insertion("/op b")
                        .append(Component.text("c").clickEvent(ClickEvent.suggestCommand("/op c"))));
        Component inert = ApprovalPrompt.inert(nested);
        assertEquals(List.of(), clicks(inert));
        assertEquals("abc", TextRenderer.plain(inert));
    }

    @Test
    void stylingSurvivesButOnlyTheButtonsHaveAHover() {
        // A hover in a template (even hidden in a quoted argument) stays text; the buttons'
        // hover, set by code from the assistant's intent, is the only one.
        Component prompt = this.prompts.render(
                Text.of("<red>Run it?</red> <hover:show_text:'<b>details'>x</hover><newline><gray>why"),
                List.of(button("approve", null)), TOKEN);
        List<String> hovers = flatten(prompt).stream().filter(part -> part.hoverEvent() != null)
                .map(part -> TextRenderer.plain((Component) part.hoverEvent().value())).toList();
        assertEquals(List.of("hover approve"), hovers);
        assertTrue(TextRenderer.plain(prompt).startsWith("Run it? <hover:show_text:'<b>details'>x</hover>\nwhy\n"),
                TextRenderer.plain(prompt));
        boolean red = flatten(prompt).stream().anyMatch(part -> part.color() == NamedTextColor.RED);
        assertTrue(red);
    }

    @Test
    void badTokensAnswersAndOptionsAreRefused() {
        List<ApprovalPrompt.Button> buttons = List.of(button("approve", null));
        assertThrows(IllegalArgumentException.class, () -> this.prompts.render(Text.of("x"), buttons, "short"));
        assertThrows(IllegalArgumentException.class,
                () -> this.prompts.render(Text.of("x"), buttons, TOKEN + " op Steve"));
        assertThrows(IllegalArgumentException.class, () -> this.prompts.render(Text.of("x"), List.of(), TOKEN));
        assertThrows(IllegalArgumentException.class, () -> button("op", null));
        assertThrows(IllegalArgumentException.class, () -> button("approve", "yes; op"));
    }
}
