package dev.mineclaw.core.managed;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How the plugin runs its own bridge ({@code bridge.managed: true} in {@code plugin-link.yml}).
 *
 * @param python the configured interpreter, or empty to look on {@code searchPath}
 * @param searchPath the folders of {@code PATH}, in order
 * @param dataFolder the plugin's data folder: the bridge's config folder, with {@code managed/} for the venv
 * @param wheelhouse wheels for an offline install; used with pip's {@code --no-index} when it holds any
 * @param host the address the bridge listens on (the host of the first {@code bridge-url})
 * @param port its port
 * @param firstBackoff the wait before the first restart, doubled after each quick death
 * @param maxBackoff the longest wait between restarts
 * @param stopWait how long a stopping bridge may take after SIGTERM before it is killed
 * @param stepTimeout how long one install step (probe, venv, pip, init) may take
 */
public record ManagedSettings(String python, List<Path> searchPath, Path dataFolder, Path wheelhouse, String host,
        int port, Duration firstBackoff, Duration maxBackoff, Duration stopWait, Duration stepTimeout) {
    public static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    public static final Duration MAX_BACKOFF = Duration.ofSeconds(60);
    public static final Duration STOP_WAIT = Duration.ofSeconds(10);
    public static final Duration STEP_TIMEOUT = Duration.ofMinutes(15);

    public ManagedSettings {
        searchPath = List.copyOf(searchPath);
    }

    /** The defaults for a server: backoff 1 s to 60 s, 10 s to stop, 15 min per install step. */
    public static ManagedSettings of(String python, List<Path> searchPath, Path dataFolder, Path wheelhouse,
            String host, int port) {
        return new ManagedSettings(python, searchPath, dataFolder, wheelhouse, host, port, FIRST_BACKOFF,
                MAX_BACKOFF, STOP_WAIT, STEP_TIMEOUT);
    }

    /** The folders of this process's {@code PATH}. */
    public static List<Path> systemPath() {
        String raw = System.getenv("PATH");
        if (raw == null || raw.isBlank()) {
            return List.of();
        }
        List<Path> dirs = new java.util.ArrayList<>();
        for (String part : raw.split(java.io.File.pathSeparator)) {
            if (!part.isBlank()) {
                try {
                    dirs.add(Path.of(part));
                } catch (java.nio.file.InvalidPathException exc) {
                    // a PATH entry that is no path cannot hold a Python
                }
            }
        }
        return dirs;
    }

    public Path venv() {
        return this.dataFolder.resolve("managed").resolve("venv");
    }
}
