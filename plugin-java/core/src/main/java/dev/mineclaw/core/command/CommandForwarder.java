package dev.mineclaw.core.command;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.chat.KeptAsks;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.link.LinkException;
import dev.mineclaw.core.platform.PermissionFacts;
import dev.mineclaw.core.platform.Permissions;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerGoneException;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import dev.mineclaw.core.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletionException;
import net.kyori.adventure.text.Component;

/**
 * Forwards {@code /mineclaw ...} to the bridge with the sender's permission facts and shows the
 * reply lines to the sender. Before forwarding it re-checks the node a subcommand needs where the
 * plugin knows it, so a bridge bug alone cannot let a player run an owner's subcommand.
 */
public final class CommandForwarder {
    private static final int MAX_ARGS = 16;
    /** The subcommand {@code /ai question} travels as. */
    private static final String AI_SUBCOMMAND = "ai";
    private static final int MAX_ARG_CHARS = 256;

    private final Platform platform;
    private final BridgeLink link;
    private final Messages messages;
    private final TextRenderer renderer;
    private final Duration timeout;
    private volatile KeptAsks kept;

    /** @param timeout how long to wait for the bridge's reply (10 s by default) */
    public CommandForwarder(Platform platform, BridgeLink link, Messages messages, TextRenderer renderer,
            Duration timeout) {
        this.platform = platform;
        this.link = link;
        this.messages = messages;
        this.renderer = renderer;
        this.timeout = timeout;
    }

    /** Where {@code /ai} questions are kept until the bridge ends them (protocol 1.5); none by default. */
    public void keep(KeptAsks asks) {
        this.kept = asks;
    }

    /**
     * Handles one {@code /mineclaw} invocation from any thread. The future completes once every
     * reply line was handed to the sender's executor; it never completes exceptionally.
     */
    public CompletableFuture<Void> handle(CommandSender sender, List<String> args) {
        Optional<Component> problem = argumentProblem(args);
        if (problem.isPresent()) {
            return reply(sender, List.of(problem.get()));
        }
        return granted(sender).thenCompose(granted -> {
            Optional<String> node = Permissions.nodeFor(args);
            if (node.isPresent() && !granted.contains(node.get())) {
                return reply(sender, List.of(
                        this.messages.line(Messages.COMMAND_NO_PERMISSION, Map.of("node", node.get()))));
            }
            KeptAsks asks = this.kept;
            boolean question = asks != null && !sender.isConsole() && args.size() == 2
                    && AI_SUBCOMMAND.equalsIgnoreCase(args.get(0));
            // A question on a link whose bridge has not said yet whether it takes ids waits for
            // that, a bounded time (KeptAsks.stateKnown): without an id it would not be kept.
            CompletableFuture<Void> known = question
                    ? asks.stateKnown().copy().completeOnTimeout(null, KeptAsks.STATE_WAIT.toMillis(),
                            TimeUnit.MILLISECONDS)
                    : CompletableFuture.completedFuture(null);
            return known.thenCompose(ready -> forward(sender, granted, args, question ? asks : null));
        }).exceptionally(error -> {
            // The player left while their permissions were read: there is no one to tell.
            return null;
        });
    }

    private CompletableFuture<Void> forward(CommandSender sender, List<String> granted, List<String> args,
            KeptAsks asks) {
        JsonObject data = commandData(sender, granted, args);
        // An /ai question the bridge takes is kept until it ends, and sent again after a relink.
        String ask = asks != null ? asks.open(sender.player().uuid(), KeptAsks.Kind.COMMAND, data) : null;
        return this.link.request("command", data, this.timeout)
                .whenComplete((answer, error) -> {
                    if (ask != null && error == null) {
                        asks.accepted(ask); // the bridge ends it with ask.done when it took no turn
                    } else if (ask != null) {
                        asks.toldNotSent(ask); // the asker is told here
                    }
                })
                .handle((answer, error) -> error == null ? lines(answer) : failureLines(error))
                .thenCompose(lines -> reply(sender, lines));
    }

    /**
     * Answers a subcommand the plugin knows itself ({@code bridge status}), to a sender holding the
     * node it needs; never reaches the bridge.
     */
    public CompletableFuture<Void> answerHere(CommandSender sender, List<String> args,
            java.util.function.Supplier<List<Component>> lines) {
        return granted(sender).thenCompose(granted -> {
            Optional<String> node = Permissions.nodeFor(args);
            if (node.isPresent() && !granted.contains(node.get())) {
                return reply(sender, List.of(
                        this.messages.line(Messages.COMMAND_NO_PERMISSION, Map.of("node", node.get()))));
            }
            return reply(sender, lines.get());
        }).exceptionally(error -> null);
    }

    private CompletableFuture<List<String>> granted(CommandSender sender) {
        if (sender.isConsole()) {
            // The console holds every node, the ones the bridge named (tiers, report_nodes) too.
            return CompletableFuture.completedFuture(Permissions.reported());
        }
        return PermissionFacts.of(this.platform, sender.player().uuid(), this.timeout);
    }

    private CompletableFuture<Void> reply(CommandSender sender, List<Component> lines) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (sender.isConsole()) {
            this.platform.runGlobal(() -> {
                try {
                    lines.forEach(this.platform::sendConsole);
                } finally {
                    done.complete(null);
                }
            });
        } else {
            this.platform.runForPlayer(sender.player().uuid(), () -> {
                try {
                    lines.forEach(line -> this.platform.sendMessage(sender.player().uuid(), line));
                } finally {
                    done.complete(null);
                }
            }, () -> done.completeExceptionally(new PlayerGoneException(sender.player().uuid())));
        }
        return done;
    }

    private List<Component> lines(JsonObject answer) {
        List<Component> out = new ArrayList<>();
        for (JsonElement line : answer.getAsJsonArray("lines")) {
            out.add(this.renderer.render(Text.fromJson(line.getAsJsonObject())));
        }
        return out;
    }

    private List<Component> failureLines(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof LinkException link) {
            if (link.code() == ErrorCode.DISCONNECTED) {
                return List.of(this.messages.line(Messages.COMMAND_OFFLINE));
            }
            if (link.code() == ErrorCode.TIMEOUT) {
                return List.of(this.messages.line(Messages.COMMAND_TIMEOUT));
            }
            return List.of(this.messages.line(Messages.COMMAND_FAILED, Map.of("code", link.code().name())));
        }
        this.platform.logger().warning("command: request failed: " + cause);
        return List.of(this.messages.line(Messages.COMMAND_FAILED, Map.of("code", ErrorCode.INTERNAL.name())));
    }

    private Optional<Component> argumentProblem(List<String> args) {
        if (args.size() > MAX_ARGS) {
            return Optional.of(this.messages.line(Messages.COMMAND_TOO_MANY_ARGS, Map.of("max", "" + MAX_ARGS)));
        }
        for (String arg : args) {
            if (arg.isEmpty() || arg.length() > MAX_ARG_CHARS) {
                return Optional.of(this.messages.line(Messages.COMMAND_ARG_LENGTH, Map.of("max", "" + MAX_ARG_CHARS)));
            }
        }
        return Optional.empty();
    }

    private static JsonObject commandData(CommandSender sender, List<String> granted, List<String> args) {
        JsonObject from = new JsonObject();
        from.addProperty("kind", sender.isConsole() ? "console" : "player");
        if (!sender.isConsole()) {
            from.add("player", sender.player().toJson());
        }
        JsonArray nodes = new JsonArray();
        granted.forEach(nodes::add);
        from.add("granted", nodes);
        JsonArray argList = new JsonArray();
        args.forEach(argList::add);
        JsonObject data = new JsonObject();
        data.add("sender", from);
        data.add("args", argList);
        return data;
    }
}
