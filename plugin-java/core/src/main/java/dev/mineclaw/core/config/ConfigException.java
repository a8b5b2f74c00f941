package dev.mineclaw.core.config;

import dev.mineclaw.core.MineclawException;

/** The plugin's config has a bad value; the message names the key and what was expected. */
public final class ConfigException extends MineclawException {
    private static final long serialVersionUID = 1L;

    private final String key;

    public ConfigException(String key, String message) {
        super(PluginConfig.FILE_NAME + ": " + key + ": " + message);
        this.key = key;
    }

    /** The offending key, as written in the file. */
    public String key() {
        return this.key;
    }
}
