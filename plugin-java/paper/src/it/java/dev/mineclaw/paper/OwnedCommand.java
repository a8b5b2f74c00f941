package dev.mineclaw.paper;

import java.util.List;
import org.bukkit.command.Command;
import org.bukkit.command.CommandSender;
import org.bukkit.plugin.Plugin;

/** A plugin's command, as a plugin that registers its own commands makes them (for the command-map suites). */
final class OwnedCommand extends Command implements org.bukkit.command.PluginIdentifiableCommand {
    private final Plugin owner;

    OwnedCommand(String name, String description, String usage, List<String> aliases, String permission,
            Plugin owner) {
        super(name, description, usage, aliases);
        setPermission(permission);
        this.owner = owner;
    }

    @Override
    public boolean execute(CommandSender sender, String label, String[] args) {
        return true;
    }

    @Override
    public Plugin getPlugin() {
        return this.owner;
    }
}
