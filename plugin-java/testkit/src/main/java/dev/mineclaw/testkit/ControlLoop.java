package dev.mineclaw.testkit;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.chat.ChatOutcome;
import dev.mineclaw.core.command.CommandSender;
import dev.mineclaw.core.gesture.GestureAnswers;
import dev.mineclaw.core.platform.PermissionFacts;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Reads control lines from stdin and drives the stand-in server and the core (CONTROL.md). A bad
 * line is answered with an error event; nothing on stdin can stop the loop but {@code shutdown}
 * or end of input.
 */
final class ControlLoop {
    private final TestkitPlatform platform;
    private final MineclawCore core;
    private final EventOut out;
    // Paper fires chat on its own async threads, not on the player's: so does the testkit.
    private final ExecutorService chatThreads = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "testkit-chat");
        thread.setDaemon(true);
        return thread;
    });

    ControlLoop(TestkitPlatform platform, MineclawCore core, EventOut out) {
        this.platform = platform;
        this.core = core;
        this.out = out;
    }

    /** Runs until {@code shutdown} or end of input. */
    void run(BufferedReader in) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            if (!handle(line)) {
                return;
            }
        }
    }

    /** Handles one line; false when it asked to shut down. */
    boolean handle(String line) {
        JsonObject command;
        try {
            JsonElement parsed = JsonParser.parseString(line);
            if (!parsed.isJsonObject()) {
                throw new BadCommand("a control line must be a JSON object");
            }
            command = parsed.getAsJsonObject();
        } catch (JsonParseException exc) {
            this.out.error("unparseable control line: " + exc.getMessage(), null);
            return true;
        } catch (BadCommand exc) {
            this.out.error(exc.getMessage(), null);
            return true;
        }
        String ref = optionalString(command, "ref");
        try {
            String op = string(command, "op");
            switch (op) {
                case "player.add" -> addPlayer(command);
                case "player.remove" -> removePlayer(command);
                case "player.set" -> setFacts(command, ref);
                case "dispatch.script" -> {
                    this.platform.scripts().add(command);
                    done("dispatch.scripted", ref);
                }
                case "recipe.add" -> {
                    this.platform.registry().add(command);
                    done("recipe.added", ref);
                }
                case "registry.reload" -> {
                    this.platform.registry().reload();
                    done("registry.reloaded", ref);
                }
                case "command.register" -> {
                    this.platform.commands().register(command);
                    done("command.registered", ref);
                }
                case "plugin.add" -> {
                    this.platform.commands().addPlugin(command);
                    done("plugin.added", ref);
                }
                case "chat" -> chat(command, ref);
                case "command" -> command(command, ref);
                case "ask" -> ask(command, ref);
                case "gesture" -> gesture(command, ref);
                case "bench.chat" -> bench(command, ref);
                case "shutdown" -> {
                    return false;
                }
                default -> throw new BadCommand("unknown op '" + op + "'");
            }
        } catch (BadCommand exc) {
            this.out.error(exc.getMessage(), ref);
        }
        return true;
    }

    void stop() {
        this.chatThreads.shutdownNow();
    }

    private void addPlayer(JsonObject command) {
        String name = string(command, "name");
        UUID uuid = offlineRef(name).uuid();
        try {
            if (command.has("uuid")) {
                uuid = UUID.fromString(string(command, "uuid"));
            }
        } catch (IllegalArgumentException exc) {
            throw new BadCommand("player.add: uuid is not a UUID");
        }
        Set<String> permissions = new HashSet<>(strings(command, "permissions"));
        ItemSnapshot held = ItemSnapshot.EMPTY;
        if (command.has("held_item")) {
            JsonObject item = object(command, "held_item");
            held = new ItemSnapshot(string(item, "material"), item.has("count") ? item.get("count").getAsInt() : 1,
                    optionalString(item, "name"));
        }
        BlockSnapshot block = new BlockSnapshot(null, "world", 0, 0, 0);
        if (command.has("target_block")) {
            JsonObject target = object(command, "target_block");
            block = new BlockSnapshot(string(target, "material"), Optional.ofNullable(optionalString(target, "world"))
                    .orElse("world"), intOr(target, "x"), intOr(target, "y"), intOr(target, "z"));
        }
        PlayerRef ref = new PlayerRef(uuid, name);
        if (!this.platform.add(new TestPlayer(ref, permissions, FactsOp.initial(held, block, command)))) {
            throw new BadCommand("player.add: a player named '" + name + "' or with uuid " + uuid + " is online");
        }
        this.core.playerJoined(ref);
    }

    /** {@code player.set}: replaces the named fact groups, then confirms, so a test knows they hold. */
    private void setFacts(JsonObject command, String ref) {
        TestPlayer player = player(string(command, "name"), "player.set");
        player.facts(FactsOp.apply(player.facts(), command));
        done("player.updated", ref);
    }

    private void done(String name, String ref) {
        JsonObject event = EventOut.event(name);
        event.addProperty("ref", ref);
        this.out.emit(event);
    }

    private void removePlayer(JsonObject command) {
        String name = string(command, "name");
        PlayerRef ref = this.platform.remove(name)
                .orElseThrow(() -> new BadCommand("player.remove: no player named '" + name + "' is online"));
        this.core.playerQuit(ref);
    }

    private void chat(JsonObject command, String ref) {
        TestPlayer player = player(string(command, "player"), "chat");
        String text = string(command, "text");
        // Permission facts are read on the player's thread, the decision on a chat thread.
        player.run(() -> {
            List<String> granted = PermissionFacts.read(this.platform, player.ref().uuid());
            this.chatThreads.execute(() -> decide(player, granted, text, ref));
        }, () -> this.out.error("chat: " + player.ref().name() + " left before chatting", ref));
    }

    private void decide(TestPlayer player, List<String> granted, String text, String ref) {
        ChatOutcome outcome = this.core.chat(player.ref(), granted, text).join();
        String shown = null;
        if (outcome.shownPublicly()) {
            String prefix = outcome.aiPrefix() ? TextRenderer.plain(this.core.messages().line(Messages.AI_PREFIX)) : "";
            shown = prefix + "<" + player.ref().name() + "> " + text;
        }
        JsonObject event = EventOut.event("chat.outcome");
        event.addProperty("ref", ref);
        event.addProperty("outcome", outcome.shownPublicly() ? "public" : "cancelled");
        event.addProperty("shown", shown);
        // Queued behind the private notice on the player's thread, so the notice is reported first.
        player.run(() -> this.out.emit(event), () -> this.out.emit(event));
    }

    private void command(JsonObject command, String ref) {
        String senderName = string(command, "sender");
        CommandSender sender = senderName.equals("console") ? CommandSender.CONSOLE
                : CommandSender.player(player(senderName, "command").ref());
        List<String> args = strings(command, "args");
        this.core.command(sender, args).whenComplete((done, error) -> {
            JsonObject event = EventOut.event("command.done");
            event.addProperty("ref", ref);
            this.out.emit(event);
        });
    }

    private void ask(JsonObject command, String ref) {
        TestPlayer player = player(string(command, "player"), "ask");
        this.core.ask(player.ref(), string(command, "text")).whenComplete((done, error) -> {
            JsonObject event = EventOut.event("command.done");
            event.addProperty("ref", ref);
            this.out.emit(event);
        });
    }

    /**
     * {@code gesture}: what the Paper adapter's listener reports, on the player's own thread: a
     * sneak starting, a new view pitch, or a right-click in air with an item. Answers
     * {@code gesture.done} with whether it answered a pending question.
     */
    private void gesture(JsonObject command, String ref) {
        TestPlayer player = player(string(command, "player"), "gesture");
        String kind = string(command, "kind");
        GestureAnswers gestures = this.core.gestures();
        java.util.function.BooleanSupplier report = switch (kind) {
            case "sneak" -> () -> gestures.sneak(player.ref(), true);
            case "look" -> {
                if (!command.has("pitch") || !command.get("pitch").isJsonPrimitive()) {
                    throw new BadCommand("gesture: look needs a number pitch");
                }
                float pitch = command.get("pitch").getAsFloat();
                yield () -> gestures.look(player.ref(), pitch);
            }
            case "use" -> {
                String item = string(command, "item");
                boolean edible = command.has("edible") && command.get("edible").getAsBoolean();
                yield () -> gestures.useItemInAir(player.ref(), item, edible);
            }
            default -> throw new BadCommand("gesture: kind must be sneak, look or use, not '" + kind + "'");
        };
        player.run(() -> {
            JsonObject event = EventOut.event("gesture.done");
            event.addProperty("ref", ref);
            event.addProperty("answered", report.getAsBoolean());
            this.out.emit(event);
        }, () -> this.out.error("gesture: " + player.ref().name() + " left first", ref));
    }

    private void bench(JsonObject command, String ref) {
        String name = string(command, "player");
        int rate = command.has("rate") ? positiveInt(command, "rate", 100_000) : 200;
        double seconds = command.has("seconds") ? positiveNumber(command, "seconds") : 10;
        if (seconds > 600) {
            throw new BadCommand("bench.chat: seconds must be at most 600");
        }
        if (rate * seconds < 1) {
            throw new BadCommand("bench.chat: rate * seconds must be at least 1");
        }
        String text = command.has("text") ? string(command, "text") : "hello";
        Optional<TestPlayer> online = this.platform.byName(name);
        if (online.isEmpty()) {
            // The benchmark measures the link, so it needs no player online: a stand-in without permissions.
            startBench(offlineRef(name), List.of(), text, rate, seconds, ref);
            return;
        }
        TestPlayer player = online.get();
        player.run(() -> startBench(player.ref(), PermissionFacts.read(this.platform, player.ref().uuid()), text, rate,
                seconds, ref), () -> startBench(player.ref(), List.of(), text, rate, seconds, ref));
    }

    private void startBench(PlayerRef player, List<String> granted, String text, int rate, double seconds,
            String ref) {
        Thread runner = new Thread(() -> {
            try {
                ChatBench.Result result = ChatBench.run(this.core.link(), player, granted, text, rate, seconds);
                JsonObject event = EventOut.event("bench.result");
                event.addProperty("ref", ref);
                event.addProperty("count", result.count());
                event.addProperty("errors", result.errors());
                event.addProperty("p50_us", result.p50Micros());
                event.addProperty("p99_us", result.p99Micros());
                event.addProperty("max_us", result.maxMicros());
                event.addProperty("first_error", result.firstError());
                this.out.emit(event);
            } catch (InterruptedException exc) {
                Thread.currentThread().interrupt();
            }
        }, "testkit-bench");
        runner.setDaemon(true);
        runner.start();
    }

    private static PlayerRef offlineRef(String name) {
        if (!name.matches("\\.?[A-Za-z0-9_]{1,16}")) {
            throw new BadCommand("'" + name + "' is not a Minecraft name");
        }
        return new PlayerRef(UUID.nameUUIDFromBytes(("OfflinePlayer:" + name).getBytes(StandardCharsets.UTF_8)), name);
    }

    private TestPlayer player(String name, String op) {
        return this.platform.byName(name)
                .orElseThrow(() -> new BadCommand(op + ": no player named '" + name + "' is online"));
    }

    private static String string(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw new BadCommand("field '" + field + "' must be a string");
        }
        return value.getAsString();
    }

    private static String optionalString(JsonObject object, String field) {
        JsonElement value = object.get(field);
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isString() ? value.getAsString()
                : null;
    }

    private static JsonObject object(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null || !value.isJsonObject()) {
            throw new BadCommand("field '" + field + "' must be an object");
        }
        return value.getAsJsonObject();
    }

    private static List<String> strings(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null) {
            return List.of();
        }
        if (!value.isJsonArray()) {
            throw new BadCommand("field '" + field + "' must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonElement item : (JsonArray) value) {
            if (!item.isJsonPrimitive() || !item.getAsJsonPrimitive().isString()) {
                throw new BadCommand("field '" + field + "' must be an array of strings");
            }
            out.add(item.getAsString());
        }
        return out;
    }

    private static int positiveInt(JsonObject object, String field, int max) {
        JsonElement value = object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            throw new BadCommand("field '" + field + "' must be a number");
        }
        double number = value.getAsDouble();
        if (number < 1 || number > max || number != Math.floor(number)) {
            throw new BadCommand("field '" + field + "' must be an integer in 1.." + max);
        }
        return (int) number;
    }

    private static double positiveNumber(JsonObject object, String field) {
        JsonElement value = object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()
                || !(value.getAsDouble() > 0)) {
            throw new BadCommand("field '" + field + "' must be a positive number");
        }
        return value.getAsDouble();
    }

    private static int intOr(JsonObject object, String field) {
        JsonElement value = object.get(field);
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber() ? value.getAsInt() : 0;
    }

    /** A control line that cannot be carried out; reported as an error event. */
    static final class BadCommand extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadCommand(String message) {
            super(message);
        }
    }
}
