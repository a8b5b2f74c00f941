package dev.mineclaw.core.command;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.Scheduling;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * Serves {@code command.resolve}: for each label, what the server's command map says (read on the
 * global executor). The bridge judges its never list on the answer, so this only reports facts,
 * bounded to the protocol's limits: a name or alias the protocol cannot carry is left out of the
 * aliases, or, for the name, reported as the label itself.
 */
public final class CommandResolution {
    /** The feature a plugin serving {@code command.resolve} announces in {@code hello}. */
    public static final String FEATURE = "command.resolve";

    private static final Pattern NAME = Pattern.compile("(?U)[^\\s]{1,80}");
    private static final int ALIASES_MAX = 64;
    private static final int PLUGIN_MAX = 64;
    private static final int PERMISSION_MAX = 256;

    private final Platform platform;
    private final Duration timeout;

    /** @param timeout how long the server may take to read its command map */
    public CommandResolution(Platform platform, Duration timeout) {
        this.platform = platform;
        this.timeout = timeout;
    }

    /** Registers the handler on {@code link}. */
    public void register(LinkClient link) {
        link.onRequest("command.resolve", this::resolve);
    }

    /** Answers {@code command.resolve}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> resolve(JsonObject data) {
        List<String> labels = new ArrayList<>();
        for (JsonElement label : data.getAsJsonArray("labels")) {
            labels.add(label.getAsString());
        }
        return Scheduling.onGlobal(this.platform, this.timeout, () -> answer(labels));
    }

    private JsonObject answer(List<String> labels) {
        JsonArray commands = new JsonArray();
        for (String label : labels) {
            commands.add(project(label, this.platform.resolveCommand(label)));
        }
        JsonObject answer = new JsonObject();
        answer.add("commands", commands);
        return answer;
    }

    /** One label's answer; public so the adapters' tests can check their facts the same way. */
    public static JsonObject project(String label, Optional<CommandFacts> found) {
        JsonObject command = new JsonObject();
        command.addProperty("label", label);
        command.addProperty("known", found.isPresent());
        JsonArray aliases = new JsonArray();
        if (found.isEmpty()) {
            command.add("name", JsonNull.INSTANCE);
            command.add("plugin", JsonNull.INSTANCE);
            command.add("aliases", aliases);
            command.add("permission", JsonNull.INSTANCE);
            command.addProperty("script", false);
            return command;
        }
        CommandFacts facts = found.get();
        command.addProperty("name", NAME.matcher(facts.name()).matches() ? facts.name() : label);
        command.add("plugin", bounded(facts.plugin(), PLUGIN_MAX));
        for (String alias : facts.aliases()) {
            if (aliases.size() < ALIASES_MAX && NAME.matcher(alias).matches()) {
                aliases.add(alias);
            }
        }
        command.add("aliases", aliases);
        command.add("permission", bounded(facts.permission(), PERMISSION_MAX));
        command.addProperty("script", facts.script());
        return command;
    }

    private static JsonElement bounded(String value, int max) {
        if (value == null || value.isEmpty()) {
            return JsonNull.INSTANCE;
        }
        return new com.google.gson.JsonPrimitive(value.length() <= max ? value : value.substring(0, max));
    }
}
