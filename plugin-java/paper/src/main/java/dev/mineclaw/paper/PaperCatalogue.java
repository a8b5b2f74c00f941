package dev.mineclaw.paper;

import dev.mineclaw.core.platform.CommandListing;
import dev.mineclaw.core.platform.PluginFacts;
import dev.mineclaw.core.platform.ServerCatalogue;
import io.papermc.paper.plugin.configuration.PluginMeta;
import java.util.ArrayList;
import java.util.List;
import org.bukkit.Server;
import org.bukkit.plugin.Plugin;

/** The installed plugins (their declared meta) and the command map, read as they are; the core bounds them. */
final class PaperCatalogue implements ServerCatalogue {
    private final Server server;

    PaperCatalogue(Server server) {
        this.server = server;
    }

    @Override
    public List<PluginFacts> plugins() {
        List<PluginFacts> plugins = new ArrayList<>();
        for (Plugin plugin : this.server.getPluginManager().getPlugins()) {
            PluginMeta meta = plugin.getPluginMeta();
            plugins.add(new PluginFacts(meta.getName(), meta.getVersion(), plugin.isEnabled(), meta.getDescription()));
        }
        return plugins;
    }

    @Override
    public List<CommandListing> commands() {
        return CommandLookup.all(this.server.getCommandMap());
    }
}
