package dev.mineclaw.core.command;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.CommandListing;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PluginFacts;
import dev.mineclaw.core.platform.Scheduling;
import dev.mineclaw.core.platform.ServerCatalogue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * Serves {@code server.plugins} and {@code server.commands}: the installed plugins, and the
 * commands of the server's command map a player may run (read through the same view as
 * {@code command.resolve}), bounded to the protocol's limits.
 *
 * <p>The map is read on the global executor at every request (a walk over a few hundred
 * entries); which permission nodes the player holds is read on the player's executor. The
 * projected answer is kept per reading and per set of held nodes (at most {@link #ANSWERS_MAX}),
 * so players with the same permissions share one answer until the map changes.
 */
public final class ServerKnowledge {
    /** The feature a plugin serving these requests announces in {@code hello}. */
    public static final String FEATURE = "server_knowledge";
    /** The answers kept per reading of the command map. */
    public static final int ANSWERS_MAX = 256;
    static final int PLUGINS_MAX = 256;
    static final int COMMANDS_MAX = 512;
    static final int ALIASES_MAX = 16;
    static final int TEXT_MAX = 256;
    static final int VERSION_MAX = 64;
    static final int PLUGIN_NAME_MAX = 64;

    private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();
    private static final Pattern NAME = Pattern.compile("(?U)[^\\s]{1,80}");
    private static final Pattern LEGACY_CODE = Pattern.compile("§.?");
    private static final Pattern UNPRINTABLE = Pattern.compile("[\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}\\p{Zl}\\p{Zp}]");
    private static final Pattern SPACES = Pattern.compile("\\s+");
    /** The key of the console's answers: it may run every command. */
    private static final String CONSOLE = "*console*";

    private final Platform platform;
    private final ServerCatalogue catalogue;
    private final Duration timeout;
    private volatile Reading reading;
    private final AtomicInteger projections = new AtomicInteger();

    /** One reading of the command map with the nodes its commands need and the answers made from it. */
    private record Reading(List<CommandListing> listing, List<String> nodes, Map<String, JsonObject> answers) {}

    /** @param timeout how long the server may take to read its map or a player's permissions */
    public ServerKnowledge(Platform platform, ServerCatalogue catalogue, Duration timeout) {
        this.platform = platform;
        this.catalogue = catalogue;
        this.timeout = timeout;
    }

    /** Registers the two handlers on {@code link}. */
    public void register(LinkClient link) {
        link.onRequest("server.plugins", this::plugins);
        link.onRequest("server.commands", this::commands);
    }

    /** Answers {@code server.plugins}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> plugins(JsonObject data) {
        int maxChars = data.get("max_chars").getAsInt();
        return Scheduling.onGlobal(this.platform, this.timeout, this.catalogue::plugins)
                .thenApply(plugins -> projectPlugins(plugins, maxChars));
    }

    /** Answers {@code server.commands}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> commands(JsonObject data) {
        UUID player = data.get("player").isJsonNull() ? null : UUID.fromString(data.get("player").getAsString());
        String plugin = data.get("plugin").isJsonNull() ? null : data.get("plugin").getAsString();
        int maxChars = data.get("max_chars").getAsInt();
        return Scheduling.onGlobal(this.platform, this.timeout, this.catalogue::commands).thenApply(this::reading)
                .thenCompose(read -> held(read, player).thenApply(held -> {
                    String key = held + "|" + (plugin == null ? "" : plugin.toLowerCase(Locale.ROOT)) + "|" + maxChars;
                    JsonObject answer = read.answers().get(key);
                    if (answer == null) {
                        answer = projectCommands(read.listing(), held, plugin, maxChars);
                        this.projections.incrementAndGet();
                        if (read.answers().size() < ANSWERS_MAX) {
                            read.answers().put(key, answer);
                        }
                    }
                    return answer.deepCopy(); // the link owns what it is handed
                }));
    }

    /** How many command answers were projected rather than taken from the kept ones (for tests). */
    int projected() {
        return this.projections.get();
    }

    /** The kept reading when the map reads the same as last time, else a new one (then kept). */
    private Reading reading(List<CommandListing> listing) {
        Reading kept = this.reading;
        if (kept != null && kept.listing().equals(listing)) {
            return kept;
        }
        TreeSet<String> nodes = new TreeSet<>();
        for (CommandListing command : listing) {
            nodes.addAll(nodesOf(command.facts().permission()));
        }
        Reading fresh = new Reading(List.copyOf(listing), List.copyOf(nodes), new ConcurrentHashMap<>());
        this.reading = fresh;
        return fresh;
    }

    /** The nodes of {@code read} that {@code player} holds, joined: the key of their answers. */
    private CompletableFuture<String> held(Reading read, UUID player) {
        if (player == null) {
            return CompletableFuture.completedFuture(CONSOLE);
        }
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> {
            List<String> held = new ArrayList<>();
            for (String node : read.nodes()) {
                if (this.platform.hasPermission(player, node)) {
                    held.add(node);
                }
            }
            return String.join(",", held);
        });
    }

    /** Bukkit lets one command name several nodes separated by {@code ;}, any of which suffices. */
    static List<String> nodesOf(String permission) {
        List<String> nodes = new ArrayList<>();
        if (permission == null) {
            return nodes;
        }
        for (String node : permission.split(";")) {
            if (!node.isBlank()) {
                nodes.add(node.strip());
            }
        }
        return nodes;
    }

    /** The answer for the holder of {@code held} (a key made by {@link #held}). */
    static JsonObject projectCommands(List<CommandListing> listing, String held, String plugin, int maxChars) {
        List<String> holds = CONSOLE.equals(held) ? null : List.of(held.isEmpty() ? new String[0] : held.split(","));
        List<CommandListing> visible = new ArrayList<>();
        for (CommandListing command : listing) {
            CommandFacts facts = command.facts();
            if (facts.script() || !NAME.matcher(facts.name()).matches()) {
                continue; // a commands.yml script is no command of its own; a name the protocol cannot carry
            }
            if (plugin != null && (facts.plugin() == null || !facts.plugin().equalsIgnoreCase(plugin))) {
                continue;
            }
            List<String> needs = nodesOf(facts.permission());
            if (holds == null || needs.isEmpty() || needs.stream().anyMatch(holds::contains)) {
                visible.add(command);
            }
        }
        visible.sort(Comparator.comparing((CommandListing c) -> c.facts().name().toLowerCase(Locale.ROOT))
                .thenComparing(c -> String.valueOf(c.facts().plugin())));
        List<JsonObject> views = new ArrayList<>();
        for (CommandListing command : visible) {
            views.add(commandView(command));
        }
        return bounded("commands", views, COMMANDS_MAX, maxChars);
    }

    private static JsonObject commandView(CommandListing command) {
        CommandFacts facts = command.facts();
        JsonObject view = new JsonObject();
        view.addProperty("name", facts.name());
        view.add("plugin", text(facts.plugin(), PLUGIN_NAME_MAX));
        JsonArray aliases = new JsonArray();
        for (String alias : facts.aliases()) {
            if (aliases.size() < ALIASES_MAX && NAME.matcher(alias).matches()) {
                aliases.add(alias);
            }
        }
        view.add("aliases", aliases);
        view.add("permission", text(facts.permission(), TEXT_MAX));
        // Bukkit's usage strings name the command as <command>; the model reads the real name.
        String usage = command.usage() == null ? null : command.usage().replace("<command>", facts.name());
        view.add("usage", text(usage, TEXT_MAX));
        view.add("description", text(command.description(), TEXT_MAX));
        return view;
    }

    /** The answer to {@code server.plugins}: every plugin by name, bounded like the commands. */
    static JsonObject projectPlugins(List<PluginFacts> plugins, int maxChars) {
        List<PluginFacts> sorted = new ArrayList<>();
        for (PluginFacts plugin : plugins) {
            if (clean(plugin.name()) != null) {
                sorted.add(plugin);
            }
        }
        sorted.sort(Comparator.comparing(p -> p.name().toLowerCase(Locale.ROOT)));
        List<JsonObject> views = new ArrayList<>();
        for (PluginFacts plugin : sorted) {
            JsonObject view = new JsonObject();
            view.add("name", text(plugin.name(), PLUGIN_NAME_MAX));
            view.add("version", text(plugin.version(), VERSION_MAX));
            view.addProperty("enabled", plugin.enabled());
            view.add("description", text(plugin.description(), TEXT_MAX));
            views.add(view);
        }
        return bounded("plugins", views, PLUGINS_MAX, maxChars);
    }

    /**
     * {@code views} under {@code field}, stopping at the first that would pass {@code max} entries
     * or {@code maxChars} bytes of compact JSON; {@code total} counts them all and {@code truncated}
     * says whether one was left out.
     */
    private static JsonObject bounded(String field, List<JsonObject> views, int max, int maxChars) {
        JsonArray listed = new JsonArray();
        int used = 2; // the brackets
        boolean truncated = false;
        for (JsonObject view : views) {
            int size = COMPACT.toJson(view).getBytes(StandardCharsets.UTF_8).length + 1;
            if (listed.size() >= max || used + size > maxChars) {
                truncated = true;
                break;
            }
            listed.add(view);
            used += size;
        }
        JsonObject answer = new JsonObject();
        answer.add(field, listed);
        answer.addProperty("total", views.size());
        answer.addProperty("truncated", truncated);
        return answer;
    }

    /** Declared text on one line, without legacy colour codes or invisible characters, cut to {@code max}. */
    private static JsonElement text(String value, int max) {
        String cleaned = clean(value);
        if (cleaned == null) {
            return JsonNull.INSTANCE;
        }
        if (cleaned.length() > max) {
            int end = max;
            if (Character.isHighSurrogate(cleaned.charAt(end - 1))) {
                end--; // never half a character
            }
            cleaned = cleaned.substring(0, end);
        }
        return new JsonPrimitive(cleaned);
    }

    private static String clean(String value) {
        if (value == null) {
            return null;
        }
        String plain = LEGACY_CODE.matcher(value).replaceAll("");
        plain = SPACES.matcher(UNPRINTABLE.matcher(plain).replaceAll(" ")).replaceAll(" ").strip();
        return plain.isEmpty() ? null : plain;
    }
}
