package dev.mineclaw.paper;

import com.mojang.brigadier.Command;
import com.mojang.brigadier.arguments.StringArgumentType;
import com.mojang.brigadier.builder.LiteralArgumentBuilder;
import com.mojang.brigadier.context.CommandContext;
import com.mojang.brigadier.tree.LiteralCommandNode;
import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.command.CommandSender;
import dev.mineclaw.core.platform.Permissions;
import io.papermc.paper.command.brigadier.CommandSourceStack;
import io.papermc.paper.command.brigadier.Commands;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bukkit.command.ConsoleCommandSender;
import org.bukkit.entity.Player;

/**
 * {@code /mineclaw}, registered through Paper's Brigadier lifecycle API. The tree gives tab
 * completion and hides subcommands a sender lacks the node for; every invocation is forwarded to
 * the core, which checks the node again and shows the bridge's answer.
 */
final class MineclawCommand {
    static final String LABEL = "mineclaw";
    private static final String ARGS = "arguments";
    /** Subcommands with their own node, then the ones open to every sender of the command. */
    private static final List<String> GUARDED = List.of(
            "listen", "reload", "compact", "clear", "stop", "model", "tools", "functions", "approve", "deny");
    private static final List<String> OPEN = List.of("status");
    /** Subcommands with a fixed second word worth completing. */
    private static final List<String> VALIDATED = List.of("tools", "functions");

    private final MineclawCore core;

    MineclawCommand(MineclawCore core) {
        this.core = core;
    }

    /** The {@code /mineclaw} node to hand to {@link Commands#register}. */
    LiteralCommandNode<CommandSourceStack> node() {
        LiteralArgumentBuilder<CommandSourceStack> root = Commands.literal(LABEL)
                .requires(MineclawCommand::playerOrConsole)
                .executes(context -> forward(context, List.of()));
        for (String name : GUARDED) {
            String node = Permissions.nodeForSubcommand(name).orElseThrow();
            root.then(subcommand(name).requires(source -> source.getSender().hasPermission(node)));
        }
        for (String name : OPEN) {
            root.then(subcommand(name));
        }
        return root.build();
    }

    private LiteralArgumentBuilder<CommandSourceStack> subcommand(String name) {
        LiteralArgumentBuilder<CommandSourceStack> literal = Commands.literal(name)
                .executes(context -> forward(context, List.of(name)))
                .then(Commands.argument(ARGS, StringArgumentType.greedyString())
                        .suggests((context, builder) -> "listen".equals(name)
                                ? builder.suggest("on").suggest("off").buildFuture()
                                : builder.buildFuture())
                        .executes(context -> forward(context, List.of(name), context.getArgument(ARGS, String.class))));
        if (VALIDATED.contains(name)) {
            literal.then(Commands.literal("validate").executes(context -> forward(context, List.of(name, "validate"))));
        }
        return literal;
    }

    private int forward(CommandContext<CommandSourceStack> context, List<String> words) {
        return forward(context, words, "");
    }

    private int forward(CommandContext<CommandSourceStack> context, List<String> words, String rest) {
        List<String> args = new ArrayList<>(words);
        if (!rest.isBlank()) {
            args.addAll(Arrays.asList(rest.strip().split("\\s+")));
        }
        org.bukkit.command.CommandSender sender = context.getSource().getSender();
        CommandSender who = sender instanceof Player player
                ? CommandSender.player(PaperPlatform.ref(player))
                : CommandSender.CONSOLE;
        // The answer arrives later, on the sender's scheduler; the command itself returns at once.
        this.core.command(who, args);
        return Command.SINGLE_SUCCESS;
    }

    // Command blocks and other senders may not speak for the console: only a player or the console.
    private static boolean playerOrConsole(CommandSourceStack source) {
        return source.getSender() instanceof Player || source.getSender() instanceof ConsoleCommandSender;
    }
}
