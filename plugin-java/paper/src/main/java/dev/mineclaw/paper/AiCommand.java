package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import io.papermc.paper.command.brigadier.BasicCommand;
import io.papermc.paper.command.brigadier.CommandSourceStack;
import java.util.Collection;
import java.util.List;
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
        return List.of();
    }

    /** Players only: a private conversation belongs to one player. */
    @Override
    public boolean canUse(org.bukkit.command.CommandSender sender) {
        return sender instanceof Player;
    }
}
