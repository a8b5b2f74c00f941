package dev.mineclaw.paper;

import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.MineclawException;
import dev.mineclaw.core.config.PluginConfig;
import dev.mineclaw.core.link.LinkListener;
import dev.mineclaw.core.link.LinkState;
import dev.mineclaw.core.managed.BridgeWheel;
import dev.mineclaw.core.managed.ManagedBridge;
import dev.mineclaw.core.managed.ManagedSettings;
import io.papermc.paper.plugin.lifecycle.event.types.LifecycleEvents;
import java.io.File;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.bukkit.configuration.ConfigurationSection;
import org.bukkit.configuration.InvalidConfigurationException;
import org.bukkit.configuration.file.YamlConfiguration;
import org.bukkit.entity.Player;
import org.bukkit.event.EventPriority;
import org.bukkit.plugin.java.JavaPlugin;

/**
 * The plugin's entry point on Paper and Folia: builds the {@link PaperPlatform}, hands it to the
 * core with the config, and registers the chat listener, join/quit events, the gestures that
 * answer a yes/no question, and {@code /mineclaw}.
 */
public class MineclawPlugin extends JavaPlugin {
    private static final String FOLIA_MARKER = "io.papermc.paper.threadedregions.RegionizedServer";

    private final boolean folia = detectFolia();
    private MineclawCore core;

    @Override
    public void onEnable() {
        PluginConfig config;
        try {
            config = loadConfig();
        } catch (MineclawException exc) {
            getLogger().severe(exc.getMessage() + "; Mineclaw stays disabled until it is fixed.");
            getServer().getPluginManager().disablePlugin(this);
            return;
        }
        RegionSchedulers schedulers = new RegionSchedulers(this);
        PaperPlatform platform = new PaperPlatform(this, schedulers, this.folia);
        this.core = new MineclawCore(platform, config.coreSettings(UUID.randomUUID()), new LinkLog());
        PermissionCache permissions = new PermissionCache();
        new ChatListener(this.core, permissions, schedulers)
                .register(this, getServer().getPluginManager(), EventPriority.valueOf(config.chatPriority()));
        getServer().getPluginManager().registerEvents(new PlayerEvents(this.core, permissions), this);
        getServer().getPluginManager().registerEvents(new GestureListener(this.core.gestures()), this);
        getServer().getPluginManager().registerEvents(platform.gameRegistry(), this);
        // Players already online (a plugin reload) get their permissions read where they are ticked.
        for (Player player : getServer().getOnlinePlayers()) {
            schedulers.forPlayer(player.getUniqueId(), () -> permissions.refresh(player), () -> { });
        }
        MineclawCommand command = new MineclawCommand(this.core);
        AiCommand ai = new AiCommand(this.core);
        getLifecycleManager().registerEventHandler(LifecycleEvents.COMMANDS, event -> {
            event.registrar().register(MineclawCommand.LABEL,
                    "Talk to the Mineclaw bridge (status, approvals, owner commands).", List.of(), command);
            event.registrar().register(AiCommand.LABEL, "Ask the assistant privately: /ai <question>.", List.of(), ai);
        });
        Optional<ManagedSettings> managed = config.managedSettings(getDataFolder().toPath());
        if (managed.isPresent()) {
            this.core.manage(new ManagedBridge(managed.get(), jarWheel(), getLogger()));
        }
        this.core.start();
        getLogger().info("Mineclaw " + getPluginMeta().getVersion() + " on " + platform.platformName()
                + ", linking to " + config.bridgeUrl());
    }

    @Override
    public void onDisable() {
        if (this.core != null) {
            // Quits are not fired for players still online at shutdown; report them before the
            // link closes, so the bridge drops their pending confirmations.
            for (Player player : getServer().getOnlinePlayers()) {
                this.core.playerQuit(PaperPlatform.ref(player));
            }
            this.core.stop();
            this.core = null;
        }
    }

    /** The bridge wheel this jar carries (the release build and make plugin add it), if any. */
    private Optional<BridgeWheel> jarWheel() {
        try {
            return BridgeWheel.fromResources(getClassLoader());
        } catch (IOException | MineclawException exc) {
            getLogger().severe("cannot read the bridge wheel in the jar: " + exc.getMessage());
            return Optional.empty();
        }
    }

    private PluginConfig loadConfig() {
        File file = new File(getDataFolder(), PluginConfig.FILE_NAME);
        if (!file.exists()) {
            saveResource(PluginConfig.FILE_NAME, false);
        }
        YamlConfiguration yaml = new YamlConfiguration();
        try {
            yaml.load(file);
        } catch (IOException | InvalidConfigurationException exc) {
            throw new MineclawException("cannot read " + file + ": " + exc.getMessage(), exc);
        }
        return PluginConfig.fromMap(plainValues(yaml), getDataFolder().toPath());
    }

    /**
     * The file's top-level values, with each section as a map of its leaves by dotted path:
     * Bukkit reads the dots of {@code chat.ai-prefix:} as nesting, and the core's message keys
     * are the dotted names as written.
     */
    static Map<String, Object> plainValues(ConfigurationSection yaml) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : yaml.getValues(false).entrySet()) {
            Object value = entry.getValue();
            if (value instanceof ConfigurationSection section) {
                Map<String, Object> leaves = new LinkedHashMap<>();
                section.getValues(true).forEach((path, leaf) -> {
                    if (!(leaf instanceof ConfigurationSection)) {
                        leaves.put(path, leaf);
                    }
                });
                value = leaves;
            }
            values.put(entry.getKey(), value);
        }
        return values;
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

    /** Link changes in the server log, so an owner sees at once when the bridge is unreachable. */
    private final class LinkLog implements LinkListener {
        @Override
        public void linkUp(String sessionId) {
            getLogger().info("linked to the bridge (session " + sessionId + ")");
        }

        @Override
        public void linkDown(String reason) {
            getLogger().warning("bridge link down: " + reason);
        }

        @Override
        public void linkState(LinkState state) {
            // The core applies it; nothing to show.
        }
    }
}
