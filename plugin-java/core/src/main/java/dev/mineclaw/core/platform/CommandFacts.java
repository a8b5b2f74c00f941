package dev.mineclaw.core.platform;

import java.util.List;
import java.util.Objects;

/**
 * What the server's command map says about one label: the command's real name, its aliases, the
 * plugin that owns it ({@code minecraft} for vanilla commands, {@code bukkit} for the server's own,
 * null when nobody does) and its permission node (null when it has none). {@code script} marks an
 * alias the server defines as other command lines ({@code commands.yml}), which cannot be judged.
 */
public record CommandFacts(String name, String plugin, List<String> aliases, String permission, boolean script) {
    public CommandFacts {
        Objects.requireNonNull(name, "name");
        aliases = List.copyOf(aliases);
    }
}
