package dev.mineclaw.core.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code bridge} section of {@code plugin-link.yml}: whether the plugin installs and runs its
 * own bridge ({@code managed}, off by default), the Python to make its venv with ({@code python},
 * empty: the first Python 3.11 or newer on PATH) and the folder of wheels for a server without
 * internet ({@code wheelhouse}, relative to the data folder; used when it holds any wheel).
 */
public record ManagedBridgeConfig(boolean enabled, String python, Path wheelhouse) {
    public static final String DEFAULT_WHEELHOUSE = "wheelhouse";
    static final String MANAGED = "managed";
    static final String PYTHON = "python";
    static final String WHEELHOUSE = "wheelhouse";
    private static final Set<String> KEYS = Set.of(MANAGED, PYTHON, WHEELHOUSE);

    /** Reads the section (a map of its keys, as the adapter hands sections over); absent: off. */
    static ManagedBridgeConfig fromSection(Object raw, Path dataFolder) {
        Path defaultWheelhouse = dataFolder.resolve(DEFAULT_WHEELHOUSE);
        if (raw == null) {
            return new ManagedBridgeConfig(false, "", defaultWheelhouse);
        }
        if (!(raw instanceof Map<?, ?> section)) {
            throw new ConfigException(PluginConfig.BRIDGE, "expected a section (managed, python, wheelhouse), got "
                    + PluginConfig.describe(raw));
        }
        for (Object key : section.keySet()) {
            if (!KEYS.contains(String.valueOf(key))) {
                throw new ConfigException(PluginConfig.BRIDGE + "." + key, "unknown key; known keys are "
                        + new TreeSet<>(KEYS));
            }
        }
        Object managed = section.get(MANAGED);
        if (managed != null && !(managed instanceof Boolean)) {
            throw new ConfigException(PluginConfig.BRIDGE + "." + MANAGED, "expected true or false, got "
                    + PluginConfig.describe(managed));
        }
        String python = text(section, PYTHON, "");
        String wheelhouse = text(section, WHEELHOUSE, DEFAULT_WHEELHOUSE);
        Path wheels;
        try {
            wheels = dataFolder.resolve(wheelhouse.isBlank() ? DEFAULT_WHEELHOUSE : wheelhouse.strip()).normalize();
            if (!python.isBlank()) {
                Path.of(python.strip());
            }
        } catch (InvalidPathException exc) {
            throw new ConfigException(PluginConfig.BRIDGE, "not a path: " + exc.getMessage());
        }
        return new ManagedBridgeConfig(Boolean.TRUE.equals(managed), python.strip(), wheels);
    }

    private static String text(Map<?, ?> section, String key, String fallback) {
        Object value = section.get(key);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof String string)) {
            throw new ConfigException(PluginConfig.BRIDGE + "." + key, "expected text, got "
                    + PluginConfig.describe(value));
        }
        return string;
    }
}
