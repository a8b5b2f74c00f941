package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.platform.Permissions;
import io.papermc.paper.command.brigadier.BasicCommand;
import io.papermc.paper.command.brigadier.CommandSourceStack;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.bukkit.entity.Player;

/**
 * {@code /ai <question>}: a private conversation with the assistant, registered like
 * {@code /mineclaw} through Paper's Brigadier lifecycle API with one greedy argument. The whole
 * question goes to the core, which checks {@code mineclaw.command.private} and forwards it to the
 * bridge; a player without the node is answered with the permission line, not Brigadier's
 * "unknown command".
 */
final class AiCommand implements BasicCommand {
    static final String LABEL = "ai";
    /**
     * The words {@code /ai} takes as commands rather than questions (the bridge decides: a line
     * without a command's shape is asked). Each alone is a command too ({@code switch},
     * {@code rename} and {@code delete} alone answer their usage and the conversations), so a
     * completed word sent as it is never becomes a question. Conversation ids live on the
     * bridge, so they are not completed here.
     */
    static final List<String> WORDS = List.of(
            "new", "list", "switch", "rename", "delete", "history", "clear", "stop");
    /** {@code /ai persona} needs this node as well (checked again by the bridge). */
    static final String PERSONA_NODE = "mineclaw.persona";

    private final MineclawCore core;

    AiCommand(MineclawCore core) {
        this.core = core;
    }

    @Override
    public void execute(CommandSourceStack source, String[] args) {
        if (!(source.getSender() instanceof Player player)) {
            return; // canUse keeps every other sender out
        }
        // The answer arrives later, on the player's scheduler; the command itself returns at once.
        this.core.ask(PaperPlatform.ref(player), String.join(" ", args));
    }

    @Override
    public Collection<String> suggest(CommandSourceStack source, String[] args) {
        // Only the first word: after it the line is a title, an id or a question.
        if (args.length > 1) {
            return List.of();
        }
        return firstWords(source.getSender(), args.length == 0 ? "" : args[0]);
    }

    /**
     * The command words starting with {@code typed} for {@code sender}: also what
     * {@code /mineclaw ai } completes. Nothing for a player who may not use /ai at all (the core
     * answers them with the permission line).
     */
    static List<String> firstWords(org.bukkit.command.CommandSender sender, String typed) {
        if (!sender.hasPermission(Permissions.PRIVATE)) {
            return List.of();
        }
        String lower = typed.toLowerCase(Locale.ROOT);
        List<String> words = new ArrayList<>();
        for (String word : WORDS) {
            if (word.startsWith(lower)) {
                words.add(word);
            }
        }
        if ("persona".startsWith(lower) && sender.hasPermission(PERSONA_NODE)) {
            words.add("persona");
        }
        return words;
    }

    /** Players only: a private conversation belongs to one player. */
    @Override
    public boolean canUse(org.bukkit.command.CommandSender sender) {
        return sender instanceof Player;
    }
}
