package dev.mineclaw.core.approval;

import dev.mineclaw.core.text.TemplateRules;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.event.ClickEvent;
import net.kyori.adventure.text.event.HoverEvent;
import net.kyori.adventure.text.minimessage.MiniMessage;
import net.kyori.adventure.text.minimessage.tag.resolver.Placeholder;
import net.kyori.adventure.text.minimessage.tag.resolver.TagResolver;
import net.kyori.adventure.text.minimessage.tag.standard.StandardTags;

/**
 * Builds an approval prompt by code: the prompt text, a new line, then one button per answer,
 * each running {@code /mineclaw <answer> <token>[ <option>]} when clicked.
 *
 * <p>The buttons are the only clickable parts, and their hover text the only hover. Templates
 * are the owner's, but a prompt's templates go through the restricted template rules
 * ({@link TemplateRules}: style tags and placeholders) plus {@code <newline>}, which the bridge
 * puts between the prompt and the assistant's stated intent; every other tag stays literal
 * text. Values are unparsed, model text is the restricted renderer's, and every click event and
 * shift-click insertion left anywhere in the rendered tree is removed before the code-built ones
 * are added. So no Text can make a player run a command, or put one in their chat box, by
 * clicking a prompt.
 */
public final class ApprovalPrompt {
    public static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{22,64}");
    public static final Pattern OPTION = Pattern.compile("[a-z0-9_-]{1,32}");
    public static final Set<String> ANSWERS = Set.of("approve", "deny");

    /** The template rules, and the line break between the prompt and the intent. */
    private final MiniMessage promptParser = MiniMessage.builder()
            .tags(TagResolver.resolver(TemplateRules.STYLES, StandardTags.newline()))
            .build();
    private final TextRenderer renderer;

    public ApprovalPrompt(TextRenderer renderer) {
        this.renderer = renderer;
    }

    /**
     * One button.
     *
     * @param hover shown when the pointer rests on the label, or null
     * @param answer {@code approve} or {@code deny}
     * @param option appended to the command when not null ({@code [a-z0-9_-]{1,32}})
     */
    public record Button(Text label, Text hover, String answer, String option) {
        public Button {
            Objects.requireNonNull(label, "label");
            if (!ANSWERS.contains(answer)) {
                throw new IllegalArgumentException("a button answers approve or deny, not '" + answer + "'");
            }
            if (option != null && !OPTION.matcher(option).matches()) {
                throw new IllegalArgumentException("a button option must match " + OPTION.pattern());
            }
        }

        /** The command the click runs, built here and nowhere else. */
        public String command(String token) {
            return "/mineclaw " + this.answer + " " + token + (this.option == null ? "" : " " + this.option);
        }
    }

    /** The whole prompt as one chat message: prompt, new line, buttons separated by spaces. */
    public Component render(Text prompt, List<Button> buttons, String token) {
        if (token == null || !TOKEN.matcher(token).matches()) {
            throw new IllegalArgumentException("an approval token must match " + TOKEN.pattern());
        }
        if (buttons.isEmpty()) {
            throw new IllegalArgumentException("a prompt needs at least one button");
        }
        List<Component> line = new ArrayList<>();
        for (Button button : buttons) {
            Component label = inert(renderText(button.label()))
                    .clickEvent(ClickEvent.runCommand(button.command(token)));
            if (button.hover() != null) {
                label = label.hoverEvent(HoverEvent.showText(inert(renderText(button.hover()))));
            }
            line.add(label);
        }
        return Component.text()
                .append(inert(renderText(prompt)))
                .append(Component.newline())
                .append(Component.join(net.kyori.adventure.text.JoinConfiguration.separator(Component.space()), line))
                .build();
    }

    /** A Text through the click-less parser: values unparsed, model text restricted. */
    Component renderText(Text text) {
        List<TagResolver> placeholders = new ArrayList<>();
        for (Map.Entry<String, String> value : text.values().entrySet()) {
            placeholders.add(Placeholder.unparsed(value.getKey(), cap(value.getValue(), TextRenderer.VALUE_MAX)));
        }
        for (Map.Entry<String, String> model : text.model().entrySet()) {
            placeholders.add(Placeholder.component(model.getKey(), this.renderer.renderModel(model.getValue())));
        }
        return this.promptParser.deserialize(cap(text.template(), TextRenderer.TEMPLATE_MAX),
                TagResolver.resolver(placeholders));
    }

    /** {@code component} with every click event and insertion removed, at every depth. */
    static Component inert(Component component) {
        List<Component> children = new ArrayList<>(component.children().size());
        for (Component child : component.children()) {
            children.add(inert(child));
        }
        return component.clickEvent(null).insertion(null).children(children);
    }

    /** Drops legacy section codes, which clients still honour, and caps the length. */
    private static String cap(String raw, int max) {
        String clean = raw.replace("\u00a7", "");
        if (clean.length() <= max) {
            return clean;
        }
        int end = Character.isHighSurrogate(clean.charAt(max - 1)) ? max - 1 : max;
        return clean.substring(0, end);
    }
}
