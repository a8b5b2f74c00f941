package dev.mineclaw.core.link;

import dev.mineclaw.core.MineclawException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the shared link token comes from. Read again on every connection attempt, so a token the
 * bridge writes after the plugin started is picked up without a restart.
 */
@FunctionalInterface
public interface TokenSource {
    /** The token; throws {@link MineclawException} naming the source when there is none. */
    String token();

    /**
     * The token from the plugin's own config when set, otherwise from the bridge's token file.
     *
     * @param configured the config value, may be null or blank
     * @param file the bridge's {@code link.token} file, may be null
     */
    static TokenSource configuredOrFile(String configured, Path file) {
        return () -> {
            if (configured != null && !configured.isBlank()) {
                return configured.strip();
            }
            if (file == null) {
                throw new MineclawException("no link token: set one in the config or name the bridge's token file");
            }
            String token;
            try {
                token = Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException exc) {
                throw new MineclawException("cannot read the link token file " + file + ": " + exc.getMessage(), exc);
            }
            if (token.isEmpty()) {
                throw new MineclawException("the link token file " + file + " is empty");
            }
            return token;
        };
    }
}
