package dev.mineclaw.core.platform;

import java.util.Objects;

/**
 * One installed plugin as the server lists it: its name, version (null when it declares none),
 * whether it is enabled, and its declared description (null when none).
 */
public record PluginFacts(String name, String version, boolean enabled, String description) {
    public PluginFacts {
        Objects.requireNonNull(name, "name");
    }
}
