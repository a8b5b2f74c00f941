package dev.mineclaw.testkit;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
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
    }

    /** What {@code label} resolves to, as Bukkit's {@code CommandMap#getCommand} would find it. */
    Optional<CommandFacts> resolve(String label) {
        return Optional.ofNullable(this.labels.get(label.toLowerCase(Locale.ROOT)));
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
        add(new CommandFacts(name.toLowerCase(Locale.ROOT), plugin, aliases, permission, false),
                plugin.toLowerCase(Locale.ROOT));
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
