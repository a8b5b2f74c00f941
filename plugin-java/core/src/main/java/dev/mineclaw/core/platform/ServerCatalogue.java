package dev.mineclaw.core.platform;

import java.util.List;

/**
 * What a server says about itself for {@code server.plugins} and {@code server.commands}: its
 * installed plugins and every command of its command map. Thin: it reads, the core bounds,
 * filters and projects.
 */
public interface ServerCatalogue {
    /** Every installed plugin, enabled or not. Global executor. */
    List<PluginFacts> plugins();

    /**
     * Every command of the command map once (under its own name, not once per alias or
     * namespace), read through the same view that answers {@link Platform#resolveCommand}.
     * Global executor.
     */
    List<CommandListing> commands();
}
