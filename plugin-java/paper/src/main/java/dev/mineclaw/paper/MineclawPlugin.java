package dev.mineclaw.paper;

import org.bukkit.plugin.java.JavaPlugin;

/**
 * The plugin's entry point on Paper and Folia. It stays thin: the adapter's job is to build a
 * {@code dev.mineclaw.core.platform.Platform} over the Bukkit API (with Folia's region and entity
 * schedulers when Folia is detected at run time), hand it to {@code dev.mineclaw.core.MineclawCore},
 * and forward chat, {@code /mineclaw} and join/quit events to the core. That wiring is the next
 * step of the Paper work; this skeleton only detects the platform and loads the config.
 */
public final class MineclawPlugin extends JavaPlugin {
    private static final String FOLIA_MARKER = "io.papermc.paper.threadedregions.RegionizedServer";

    private final boolean folia = detectFolia();

    @Override
    public void onEnable() {
        saveDefaultConfig();
        getLogger().info("Mineclaw " + getPluginMeta().getVersion() + " on " + (this.folia ? "Folia" : "Paper")
                + "; the bridge link is not wired into this build yet.");
    }

    @Override
    public void onDisable() {
        getLogger().info("Mineclaw disabled.");
    }

    /** Whether the server runs Folia's regionised scheduler, decided at run time, never at build time. */
    public boolean isFolia() {
        return this.folia;
    }

    private static boolean detectFolia() {
        try {
            Class.forName(FOLIA_MARKER);
            return true;
        } catch (ClassNotFoundException exc) {
            return false;
        }
    }
}
