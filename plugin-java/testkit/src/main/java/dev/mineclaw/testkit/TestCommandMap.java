package dev.mineclaw.testkit;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.CommandListing;
import dev.mineclaw.core.platform.PluginFacts;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stand-in server's command map, as Bukkit's behaves: every command under its name, its
 * aliases and {@code <namespace>:<label>}; a plugin's command takes the bare label from a vanilla
 * one of the same name (which keeps {@code minecraft:<name>}). It models vanilla commands and a
 * few plugins with their real aliases and permission nodes (EssentialsX, LuckPerms, CMI,
 * PlugManX), a harmless plugin ({@code Warps}) and a {@code commands.yml} alias script; the
 * {@code command.register} op adds more (CONTROL.md).
 */
final class TestCommandMap {
    private static final List<String> VANILLA = List.of("say", "give", "tp", "time", "weather", "gamemode", "kill",
            "effect", "list", "msg", "tell", "me", "summon", "setblock", "xp", "clear", "difficulty", "gamerule",
            "title", "tellraw", "playsound", "particle", "enchant", "spawnpoint", "teleport", "op", "deop", "ban",
            "pardon", "kick", "stop", "whitelist", "reload", "execute", "return", "data", "fill", "item", "function",
            "schedule", "transfer", "place");

    private final Map<String, CommandFacts> labels = new ConcurrentHashMap<>();
    /** Each command's declared usage and description, as a plugin.yml declares them. */
    private final Map<CommandFacts, List<String>> texts = new ConcurrentHashMap<>();
    /** The installed plugins by lower-cased name ({@code plugin.add} replaces one). */
    private final Map<String, PluginFacts> plugins = new ConcurrentHashMap<>();

    TestCommandMap() {
        for (String name : VANILLA) {
            add(new CommandFacts(name, "minecraft", List.of(), "minecraft.command." + name, false), "minecraft");
        }
        add(new CommandFacts("sudo", "Essentials", List.of("esudo"), "essentials.sudo", false), "essentials");
        add(new CommandFacts("ban", "Essentials", List.of("eban"), "essentials.ban", false), "essentials");
        add(new CommandFacts("tempban", "Essentials", List.of("etempban"), "essentials.tempban", false), "essentials");
        add(new CommandFacts("eco", "Essentials", List.of("eeco", "economy", "eeconomy"), "essentials.eco", false),
                "essentials");
        add(new CommandFacts("kick", "Essentials", List.of("ekick"), "essentials.kick", false), "essentials");
        add(new CommandFacts("spawn", "Essentials", List.of("espawn"), "essentials.spawn", false), "essentials");
        add(new CommandFacts("luckperms", "LuckPerms", List.of("lp", "perm", "perms", "permission", "permissions"),
                "luckperms.use", false), "luckperms");
        add(new CommandFacts("cmi", "CMI", List.of(), "cmi.command", false), "cmi");
        add(new CommandFacts("plugman", "PlugManX", List.of("pm"), "plugman.admin", false), "plugmanx");
        add(new CommandFacts("warp", "Warps", List.of("go"), "warps.use", false), "warps");
        add(new CommandFacts("heal-all", null, List.of(), null, true), "bukkit");
        describe("give", "/<command> <targets> <item> [<count>]", "A Mojang provided command.");
        describe("time", "/<command> (add|query|set) <time>", "A Mojang provided command.");
        describe("list", "/<command>", "A Mojang provided command.");
        describe("warp", "/<command> <name>", "Teleports you to a warp.");
        describe("spawn", "/<command> [player]", "Teleport to the spawnpoint.");
        describe("sudo", "/<command> <player> <command [args]>", "Make another user perform a command.");
        describe("luckperms", "/<command>", "Manage permissions");
        plugin(new PluginFacts("Essentials", "2.21.0", true, "Provides an essential, core set of commands for Bukkit."));
        plugin(new PluginFacts("LuckPerms", "5.4.131", true, "A permissions plugin"));
        plugin(new PluginFacts("CMI", "9.7.4.1", true, "Content Management Interface"));
        plugin(new PluginFacts("PlugManX", "2.4.1", true, "Plugin manager for Bukkit servers."));
        plugin(new PluginFacts("Warps", "1.0.0", true, "Named places to travel to."));
    }

    /** What {@code label} resolves to, as Bukkit's {@code CommandMap#getCommand} would find it. */
    Optional<CommandFacts> resolve(String label) {
        return Optional.ofNullable(this.labels.get(label.toLowerCase(Locale.ROOT)));
    }

    /** Every command once, as Bukkit's {@code getKnownCommands} values hold them, with usage and description. */
    List<CommandListing> all() {
        Set<CommandFacts> distinct = new java.util.LinkedHashSet<>(new TreeMap<>(this.labels).values());
        List<CommandListing> listed = new ArrayList<>();
        for (CommandFacts facts : distinct) {
            List<String> text = this.texts.getOrDefault(facts, java.util.Arrays.asList(null, null));
            listed.add(new CommandListing(facts, text.get(0), text.get(1)));
        }
        return List.copyOf(listed);
    }

    /** Every installed plugin. */
    List<PluginFacts> plugins() {
        return List.copyOf(new TreeMap<>(this.plugins).values());
    }

    /**
     * Reads a {@code plugin.add} op: {@code name}, {@code version}, {@code enabled} (default true),
     * {@code description}; text is kept raw (bounding and cleaning it is the core's job).
     */
    void addPlugin(JsonObject op) {
        String name = raw(op, "name", "plugin.add");
        if (name == null || name.isBlank()) {
            throw new BadCommand("plugin.add: name is required");
        }
        JsonElement enabled = op.get("enabled");
        if (enabled != null && !(enabled.isJsonPrimitive() && enabled.getAsJsonPrimitive().isBoolean())) {
            throw new BadCommand("plugin.add: enabled must be true or false");
        }
        plugin(new PluginFacts(name, raw(op, "version", "plugin.add"), enabled == null || enabled.getAsBoolean(),
                raw(op, "description", "plugin.add")));
    }

    private void plugin(PluginFacts facts) {
        this.plugins.put(facts.name().toLowerCase(Locale.ROOT), facts);
    }

    private void describe(String label, String usage, String description) {
        this.texts.put(this.labels.get(label), java.util.Arrays.asList(usage, description));
    }

    private static String raw(JsonObject op, String field, String opName) {
        JsonElement value = op.get(field);
        if (value == null || value.isJsonNull()) {
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw new BadCommand(opName + ": " + field + " must be a string");
        }
        return value.getAsString();
    }

    /** Reads a {@code command.register} op: {@code name}, {@code plugin}, {@code aliases}, {@code permission}. */
    void register(JsonObject op) {
        String name = text(op, "name", true);
        String plugin = text(op, "plugin", true);
        String permission = text(op, "permission", false);
        List<String> aliases = new ArrayList<>();
        JsonElement raw = op.get("aliases");
        if (raw != null && !raw.isJsonNull()) {
            if (!raw.isJsonArray()) {
                throw new BadCommand("command.register: aliases must be an array of strings");
            }
            for (JsonElement alias : raw.getAsJsonArray()) {
                if (!alias.isJsonPrimitive() || !alias.getAsJsonPrimitive().isString() || alias.getAsString().isBlank()) {
                    throw new BadCommand("command.register: aliases must be an array of strings");
                }
                aliases.add(alias.getAsString().toLowerCase(Locale.ROOT));
            }
        }
        CommandFacts facts = new CommandFacts(name.toLowerCase(Locale.ROOT), plugin, aliases, permission, false);
        add(facts, plugin.toLowerCase(Locale.ROOT));
        this.texts.put(facts, java.util.Arrays.asList(raw(op, "usage", "command.register"),
                raw(op, "description", "command.register")));
    }

    private void add(CommandFacts facts, String namespace) {
        List<String> all = new ArrayList<>(facts.aliases());
        all.add(0, facts.name());
        for (String label : all) {
            this.labels.put(label, facts);
            this.labels.put(namespace + ":" + label, facts);
        }
    }

    private static String text(JsonObject op, String field, boolean required) {
        JsonElement value = op.get(field);
        if (value == null || value.isJsonNull()) {
            if (required) {
                throw new BadCommand("command.register: " + field + " is required");
            }
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString() || value.getAsString().isBlank()
                || value.getAsString().contains(" ")) {
            throw new BadCommand("command.register: " + field + " must be one word");
        }
        return value.getAsString();
    }
}
