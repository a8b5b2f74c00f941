package dev.mineclaw.testkit;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.FeedbackCollector;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What scripted commands do ({@code dispatch.script}, CONTROL.md): for a command equal to a
 * prefix or starting with the prefix and a space, the longest such prefix decides the status and,
 * for the console, the feedback lines. Feedback goes through the core's {@link FeedbackCollector}
 * as the Paper adapter's does, so the protocol's bounds apply the same way.
 */
final class DispatchScripts {
    /** One scripted outcome: {@code dispatched}, {@code rejected} or {@code failed} (the command throws). */
    record Script(String status, List<String> feedback) {
        Script {
            feedback = List.copyOf(feedback);
        }
    }

    private final Map<String, Script> scripts = new ConcurrentHashMap<>();

    /** Reads and stores a {@code dispatch.script} op; {@code "feedback": null} or absent means none. */
    void add(JsonObject op) {
        JsonElement prefix = op.get("command_prefix");
        if (prefix == null || !prefix.isJsonPrimitive() || !prefix.getAsJsonPrimitive().isString()
                || prefix.getAsString().isBlank() || prefix.getAsString().startsWith("/")) {
            throw new BadCommand("dispatch.script: command_prefix must be a non-blank string without a leading /");
        }
        String status = "dispatched";
        if (op.has("status")) {
            JsonElement raw = op.get("status");
            status = raw.isJsonPrimitive() && raw.getAsJsonPrimitive().isString() ? raw.getAsString() : "";
            if (!List.of("dispatched", "rejected", "failed").contains(status)) {
                throw new BadCommand("dispatch.script: status must be dispatched, rejected or failed");
            }
        }
        List<String> feedback = new ArrayList<>();
        JsonElement lines = op.get("feedback");
        if (lines != null && !lines.isJsonNull()) {
            if (!lines.isJsonArray()) {
                throw new BadCommand("dispatch.script: feedback must be an array of strings");
            }
            for (JsonElement line : lines.getAsJsonArray()) {
                if (!line.isJsonPrimitive() || !line.getAsJsonPrimitive().isString()) {
                    throw new BadCommand("dispatch.script: feedback must be an array of strings");
                }
                feedback.add(line.getAsString());
            }
        }
        this.scripts.put(prefix.getAsString(), new Script(status, feedback));
    }

    /** The script for {@code command}, by the longest matching prefix. */
    Optional<Script> find(String command) {
        Script best = null;
        int bestLength = -1;
        for (Map.Entry<String, Script> entry : this.scripts.entrySet()) {
            String prefix = entry.getKey();
            boolean matches = command.equals(prefix) || command.startsWith(prefix + " ");
            if (matches && prefix.length() > bestLength) {
                best = entry.getValue();
                bestLength = prefix.length();
            }
        }
        return Optional.ofNullable(best);
    }

    /** The console outcome of a scripted command; throws for status {@code failed}. */
    static ConsoleDispatch console(Script script, String command) {
        if ("failed".equals(script.status())) {
            throw new IllegalStateException("scripted failure of '" + command + "'");
        }
        FeedbackCollector collector = new FeedbackCollector();
        script.feedback().forEach(collector::add);
        return collector.result("dispatched".equals(script.status()));
    }

    /** The player outcome of a scripted command: accepted or not; throws for status {@code failed}. */
    static boolean player(Script script, String command) {
        if ("failed".equals(script.status())) {
            throw new IllegalStateException("scripted failure of '" + command + "'");
        }
        return "dispatched".equals(script.status());
    }
}
