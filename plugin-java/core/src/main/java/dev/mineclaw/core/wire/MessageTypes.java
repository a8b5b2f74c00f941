package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The message types of protocol version 1: who may send each, whether it is a request or an
 * event, and the schema of its data and of its answer's data (docs/protocol.md).
 */
public final class MessageTypes {
    /**
     * The plugin stopped waiting for a {@code chat} verdict: {@code {"request": "<the chat's id>"}}.
     * The message was already treated as unanswered, so the bridge drops it.
     */
    public static final String CHAT_EXPIRED = "chat.expired";
    /**
     * The question with this id ended (since 1.5, feature {@code asks}): {@code {"ask": "<id>"}}.
     * The plugin forgets the question it kept.
     */
    public static final String ASK_DONE = "ask.done";

    /** The suffix of an answer's type. */
    public static final String RESULT_SUFFIX = ".result";
    /** The type of an error frame. */
    public static final String ERROR = "error";
    /** The most players a {@code players.list} answer may name (what fits the 64 KiB frame cap). */
    public static final int PLAYERS_MAX = 800;

    private static final Set<String> COMMANDS_EXECUTORS = Set.of("console", "player");
    private static final Map<String, Spec> SPECS = new HashMap<>();

    static {
        Direction toBridge = Direction.PLUGIN_TO_BRIDGE;
        Direction toPlugin = Direction.BRIDGE_TO_PLUGIN;
        request(toBridge, "hello", MessageTypes::hello, data -> {
            data.only(Set.of("bridge_version", "session_id"), Set.of("bridge_version", "session_id"));
            data.string("bridge_version", 1, 64, null);
            data.string("session_id", 1, 64, FrameCodec.ID);
        });
        request(toBridge, "chat", data -> {
            data.only(Set.of("player", "granted", "text", "ask", "resent"), Set.of("player", "granted", "text"));
            Shapes.playerRef(data.object("player"));
            Shapes.granted(data, "granted");
            data.string("text", 1, 4096, null);
            askFields(data);
        }, data -> {
            data.only(Set.of("decision", "ai_prefix", "notice"), Set.of("decision", "ai_prefix", "notice"));
            data.oneOf("decision", Set.of("pass", "accept", "refuse"));
            data.bool("ai_prefix");
            Shapes.nullableText(data, "notice");
        });
        request(toBridge, "command", MessageTypes::command, data -> {
            data.only(Set.of("lines"), Set.of("lines"));
            JsonArray lines = data.array("lines", 64);
            for (int i = 0; i < lines.size(); i++) {
                Shapes.text(Fields.of(lines.get(i), data.name("lines[" + i + "]"), ErrorCode.INVALID_DATA));
            }
        });
        event(toBridge, "player.join", MessageTypes::playerOnly);
        event(toBridge, "player.quit", MessageTypes::playerOnly);
        event(toBridge, CHAT_EXPIRED, data -> {
            data.only(Set.of("request"), Set.of("request"));
            data.string("request", 1, 64, FrameCodec.ID);
        });

        event(toPlugin, "hello.challenge", data -> {
            data.only(Set.of("nonce", "protocol", "bridge_version"), Set.of("nonce", "protocol", "bridge_version"));
            data.string("nonce", 43, 43, Shapes.NONCE);
            data.integer("protocol", 0, 65535);
            data.string("bridge_version", 1, 64, null);
        });
        event(toPlugin, ASK_DONE, data -> {
            data.only(Set.of("ask"), Set.of("ask"));
            data.string("ask", 1, 64, FrameCodec.ID);
        });
        event(toPlugin, "link.state", data -> {
            data.only(Set.of("forward", "public_prefix", "budget_tiers", "report_nodes", "asks"),
                    Set.of("forward", "public_prefix"));
            if (data.has("asks") && !data.bool("asks")) {
                throw data.fail("asks", "must be true or left out");
            }
            data.oneOf("forward", Set.of("all", "prefixed"));
            data.string("public_prefix", 1, 32, null);
            if (data.has("budget_tiers")) {
                Shapes.budgetTiers(data, "budget_tiers");
            }
            if (data.has("report_nodes")) {
                Shapes.reportNodes(data, "report_nodes");
            }
        });
        request(toPlugin, "output.chat", data -> {
            data.only(Set.of("target", "player", "text", "ask"), Set.of("target", "text"));
            String target = data.oneOf("target", Set.of("broadcast", "player"));
            playerIff(data, "player".equals(target));
            Shapes.text(data.object("text"));
            if (data.has("ask")) {
                data.string("ask", 1, 64, FrameCodec.ID);
            }
        }, data -> {
            data.only(Set.of("delivered"), Set.of("delivered"));
            data.integer("delivered", 0, Integer.MAX_VALUE);
        });
        event(toPlugin, "output.actionbar", data -> {
            data.only(Set.of("player", "text"), Set.of("player", "text"));
            data.string("player", 36, 36, Shapes.UUID);
            Shapes.text(data.object("text"));
        });
        request(toPlugin, "players.list", data -> data.only(Set.of(), Set.of()), data -> {
            data.only(Set.of("players"), Set.of("players"));
            JsonArray players = data.array("players", PLAYERS_MAX);
            for (int i = 0; i < players.size(); i++) {
                Shapes.playerRef(Fields.of(players.get(i), data.name("players[" + i + "]"), ErrorCode.INVALID_DATA));
            }
        });
        request(toPlugin, "command.dispatch", data -> {
            String executor = targetOrExecutor(data, "executor", COMMANDS_EXECUTORS, "command");
            playerIff(data, "player".equals(executor));
            String command = data.string("command", 1, 256, null);
            if (command.startsWith("/")) {
                throw data.fail("command", "must not start with '/'");
            }
        }, data -> {
            data.only(Set.of("dispatch_status", "feedback"), Set.of("dispatch_status", "feedback"));
            data.oneOf("dispatch_status", Set.of("dispatched", "rejected", "failed"));
            if (!data.isNull("feedback")) {
                Shapes.stringList(data, "feedback", 64, 2048);
            }
        });
        ToolTypes.register();
        FactsTypes.register();
        CommandTypes.register();
        KnowledgeTypes.register();
        KnowledgeTypes.registerBooks();
    }

    private MessageTypes() {}

    /** A request or an event type. */
    public enum Kind {
        REQUEST,
        EVENT
    }

    /** What the specification says about one type. */
    record Spec(String type, Kind kind, Direction sender, Consumer<Fields> data, Consumer<Fields> answer) {}

    static void request(Direction sender, String type, Consumer<Fields> data, Consumer<Fields> answer) {
        SPECS.put(type, new Spec(type, Kind.REQUEST, sender, data, answer));
    }

    private static void event(Direction sender, String type, Consumer<Fields> data) {
        SPECS.put(type, new Spec(type, Kind.EVENT, sender, data, null));
    }

    /** Whether {@code type} names an answer: an error frame or a {@code *.result}. */
    public static boolean isAnswerType(String type) {
        return ERROR.equals(type) || type.endsWith(RESULT_SUFFIX);
    }

    /** The kind of a request or event type sent in {@code sender}'s direction, or {@code null}. */
    public static Kind kindOf(String type, Direction sender) {
        Spec spec = SPECS.get(type);
        return spec != null && spec.sender() == sender ? spec.kind() : null;
    }

    /** The spec of a request or event type sent in {@code sender}'s direction, or {@code null}. */
    static Spec spec(String type, Direction sender) {
        Spec spec = SPECS.get(type);
        return spec != null && spec.sender() == sender ? spec : null;
    }

    /** The request spec whose answer {@code answerType} is, when sent in {@code sender}'s direction. */
    static Spec answered(String answerType, Direction sender) {
        if (!answerType.endsWith(RESULT_SUFFIX)) {
            return null;
        }
        Spec spec = spec(answerType.substring(0, answerType.length() - RESULT_SUFFIX.length()), sender.reverse());
        return spec != null && spec.kind() == Kind.REQUEST ? spec : null;
    }

    private static void hello(Fields data) {
        data.only(
                Set.of("protocol", "nonce", "mac", "instance_id", "plugin_version", "minecraft_version", "platform",
                        "features", "server_id", "data_version"),
                Set.of("protocol", "nonce", "mac", "instance_id", "plugin_version", "minecraft_version", "platform",
                        "features"));
        if (data.has("server_id")) {
            data.string("server_id", 1, 32, Shapes.SERVER_ID);
        }
        if (data.has("data_version")) {
            data.integer("data_version", 1, Integer.MAX_VALUE);
        }
        Fields protocol = data.object("protocol");
        protocol.only(Set.of("major", "minor"), Set.of("major", "minor"));
        protocol.integer("major", 0, 65535);
        protocol.integer("minor", 0, 65535);
        data.string("nonce", 43, 43, Shapes.NONCE);
        data.string("mac", 64, 64, Shapes.MAC);
        data.string("instance_id", 36, 36, Shapes.UUID);
        data.string("plugin_version", 1, 64, null);
        data.string("minecraft_version", 1, 64, null);
        data.oneOf("platform", Set.of("paper", "folia", "testkit"));
        JsonArray features = data.array("features", 32);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < features.size(); i++) {
            String where = "features[" + i + "]";
            if (!features.get(i).isJsonPrimitive() || !features.get(i).getAsJsonPrimitive().isString()) {
                throw data.fail(where, "must be a string");
            }
            String feature = data.checkString(where, features.get(i).getAsString(), 1, 64, Shapes.FEATURE);
            if (!seen.add(feature)) {
                throw data.fail(where, "repeats '" + feature + "'");
            }
        }
    }

    /** The optional {@code ask} id of a question and its {@code resent} flag (since 1.5). */
    private static void askFields(Fields data) {
        if (data.has("ask")) {
            data.string("ask", 1, 64, FrameCodec.ID);
        }
        if (data.has("resent")) {
            if (!data.has("ask")) {
                throw data.fail("resent", "is only allowed with ask");
            }
            data.bool("resent");
        }
    }

    private static void command(Fields data) {
        data.only(Set.of("sender", "args", "ask", "resent"), Set.of("sender", "args"));
        askFields(data);
        Fields sender = data.object("sender");
        String kind = targetOrExecutor(sender, "kind", Set.of("player", "console"), "granted");
        if ("player".equals(kind)) {
            sender.only(Set.of("kind", "player", "granted"), Set.of("kind", "player", "granted"));
            Shapes.playerRef(sender.object("player"));
        } else {
            sender.only(Set.of("kind", "granted"), Set.of("kind", "granted"));
        }
        Shapes.granted(sender, "granted");
        Shapes.stringList(data, "args", 16, 256);
        JsonArray args = data.array("args", 16);
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).getAsString().isEmpty()) {
                throw data.fail("args[" + i + "]", "must be 1-256 characters, got 0");
            }
        }
    }

    private static void playerOnly(Fields data) {
        data.only(Set.of("player"), Set.of("player"));
        Shapes.playerRef(data.object("player"));
    }

    /** Checks the allowed fields of a target/executor-switched object and returns the switch. */
    private static String targetOrExecutor(Fields data, String field, Set<String> choices, String other) {
        data.only(Set.of(field, "player", other), Set.of(field, other));
        return data.oneOf(field, choices);
    }

    private static void playerIff(Fields data, boolean wanted) {
        if (wanted) {
            if (!data.has("player")) {
                throw new WireException(ErrorCode.INVALID_DATA, "missing field " + data.name("player"));
            }
            data.string("player", 36, 36, Shapes.UUID);
        } else if (data.has("player")) {
            throw data.fail("player", "is only allowed with a player target");
        }
    }
}
