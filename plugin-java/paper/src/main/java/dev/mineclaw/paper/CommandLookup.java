package dev.mineclaw.paper;

import dev.mineclaw.core.platform.CommandFacts;
import dev.mineclaw.core.platform.CommandListing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.bukkit.command.Command;
import org.bukkit.command.CommandMap;
import org.bukkit.command.FormattedCommandAlias;
import org.bukkit.command.PluginIdentifiableCommand;

/**
 * Reads the server's command map: one label's facts for {@code command.resolve}, and every
 * command with the same facts for {@code server.commands}, so both see the map the same way.
 */
final class CommandLookup {
    private CommandLookup() {}

    static Optional<CommandFacts> facts(CommandMap map, String label) {
        Command command = map.getCommand(label.toLowerCase(Locale.ROOT));
        return command == null ? Optional.empty() : Optional.of(facts(command));
    }

    /** Every command of {@code map} once (the map holds each under its name, aliases and namespace). */
    static List<CommandListing> all(CommandMap map) {
        Set<Command> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<CommandListing> listed = new ArrayList<>();
        for (Command command : map.getKnownCommands().values()) {
            if (command != null && seen.add(command)) {
                listed.add(new CommandListing(facts(command), command.getUsage(), command.getDescription()));
            }
        }
        return listed;
    }

    private static CommandFacts facts(Command command) {
        String permission = command.getPermission();
        return new CommandFacts(command.getName(), owner(command, permission), command.getAliases(), permission,
                command instanceof FormattedCommandAlias);
    }

    /** The owning plugin; the server's own commands are {@code minecraft} (vanilla) or {@code bukkit}. */
    private static String owner(Command command, String permission) {
        if (command instanceof PluginIdentifiableCommand owned) {
            return owned.getPlugin().getName();
        }
        if (permission != null && permission.startsWith("minecraft.")) {
            return "minecraft";
        }
        if (permission != null && permission.startsWith("bukkit.")) {
            return "bukkit";
        }
        return null;
    }
}
