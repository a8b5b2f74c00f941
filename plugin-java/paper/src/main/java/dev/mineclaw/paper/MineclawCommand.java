package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.command.CommandSender;
import dev.mineclaw.core.platform.Permissions;
import io.papermc.paper.command.brigadier.BasicCommand;
import io.papermc.paper.command.brigadier.CommandSourceStack;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.bukkit.command.ConsoleCommandSender;
import org.bukkit.command.RemoteConsoleCommandSender;
import org.bukkit.entity.Player;

/**
 * {@code /mineclaw}, registered through Paper's Brigadier lifecycle API as one command with a
 * greedy argument whose suggestions come from here. Suggestions list only the subcommands the
 * sender holds the node for; every invocation is forwarded to the core, which checks the node and
 * answers a sender without it with the permission line (a tree of literals with permission
 * requirements would answer Brigadier's "Incorrect argument" instead).
 */
final class MineclawCommand implements BasicCommand {
    static final String LABEL = "mineclaw";
    /** Subcommands with their own node, then the ones open to every sender of the command. */
    private static final List<String> GUARDED = List.of(
            "listen", "reload", "compact", "clear", "stop", "model", "tools", "functions", "approve", "deny", "ai", "history", "bridge");
    private static final List<String> OPEN = List.of("status", "help", "usage", "retry", "memory");
    /** {@code memory}'s second words every player may use on their own memories. */
    private static final List<String> MEMORY = List.of("list", "server", "conversations", "share", "unshare", "forget");
    /** Subcommands with a fixed second word worth completing. */
    private static final List<String> VALIDATED = List.of("tools", "functions");

    private final MineclawCore core;

    MineclawCommand(MineclawCore core) {
        this.core = core;
    }

    @Override
    public void execute(CommandSourceStack source, String[] args) {
        org.bukkit.command.CommandSender sender = source.getSender();
        CommandSender who = sender instanceof Player player
                ? CommandSender.player(PaperPlatform.ref(player))
                : CommandSender.CONSOLE;
        List<String> words = new ArrayList<>();
        for (String arg : args) {
            if (!arg.isBlank()) {
                words.add(arg.strip());
            }
        }
        // The answer arrives later, on the sender's scheduler; the command itself returns at once.
        this.core.command(who, words);
    }

    @Override
    public Collection<String> suggest(CommandSourceStack source, String[] args) {
        org.bukkit.command.CommandSender sender = source.getSender();
        if (args.length <= 1) {
            String typed = args.length == 0 ? "" : args[0].toLowerCase(Locale.ROOT);
            List<String> names = new ArrayList<>();
            for (String name : subcommands()) {
                boolean open = Permissions.OPEN_CHOICES.containsKey(name) && sender instanceof Player;
                if (name.startsWith(typed) && (open || allowed(sender, name))) {
                    names.add(name);
                }
            }
            return names;
        }
        if (args.length == 2 && "ai".equals(args[0])) {
            return AiCommand.firstWords(sender, args[1]); // /mineclaw ai is /ai
        }
        if (args.length == 2) {
            List<String> second = new ArrayList<>();
            if (allowed(sender, args[0])) {
                second.addAll("listen".equals(args[0]) ? List.of("on", "off", "status", "why")
                        : "model".equals(args[0]) ? List.of("list", "default")
                        : "bridge".equals(args[0]) ? List.of("status")
                        : "memory".equals(args[0]) ? MEMORY
                        : VALIDATED.contains(args[0]) ? List.of("validate") : List.of());
            }
            // Every player's own choice, whatever their nodes.
            second.addAll(Permissions.OPEN_CHOICES.getOrDefault(args[0], java.util.Set.of()).stream().sorted()
                    .toList());
            return second.stream().filter(word -> word.startsWith(args[1])).toList();
        }
        return List.of();
    }

    /**
     * Players, the console and RCON (whose answer, coming after the command returned, is shown in
     * the server console: RCON only carries what is said during the command). Command blocks and
     * other senders may not speak for the console.
     */
    @Override
    public boolean canUse(org.bukkit.command.CommandSender sender) {
        return sender instanceof Player || sender instanceof ConsoleCommandSender
                || sender instanceof RemoteConsoleCommandSender;
    }

    private static List<String> subcommands() {
        List<String> all = new ArrayList<>(OPEN);
        all.addAll(GUARDED);
        return all;
    }

    // Suggestions run where Paper handles the completion request (the player's own thread), where
    // reading permissions is allowed.
    private static boolean allowed(org.bukkit.command.CommandSender sender, String subcommand) {
        return Permissions.nodeForSubcommand(subcommand).map(sender::hasPermission).orElse(true);
    }
}
