package dev.mineclaw.paper;

import dev.mineclaw.core.platform.CommandFacts;
import java.util.Locale;
import java.util.Optional;
import org.bukkit.command.Command;
import org.bukkit.command.CommandMap;
import org.bukkit.command.FormattedCommandAlias;
import org.bukkit.command.PluginIdentifiableCommand;

/** Reads one label from the server's command map: the facts {@code command.resolve} reports. */
final class CommandLookup {
    private CommandLookup() {}

    static Optional<CommandFacts> facts(CommandMap map, String label) {
        Command command = map.getCommand(label.toLowerCase(Locale.ROOT));
        if (command == null) {
            return Optional.empty();
        }
        String permission = command.getPermission();
        return Optional.of(new CommandFacts(command.getName(), owner(command, permission), command.getAliases(),
                permission, command instanceof FormattedCommandAlias));
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
