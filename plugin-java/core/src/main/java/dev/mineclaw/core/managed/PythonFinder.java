package dev.mineclaw.core.managed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Finds the Python the bridge's venv is made with: the configured one, or the first new enough on {@code PATH}. */
final class PythonFinder {
    static final int MIN_MAJOR = 3;
    static final int MIN_MINOR = 11;
    /** Tried in each folder of PATH, in this order: a plain {@code python3} first, as an owner would. */
    static final List<String> NAMES = List.of("python3", "python3.14", "python3.13", "python3.12", "python3.11",
            "python");
    private static final String PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";
    private static final Pattern VERSION = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)");

    /** An interpreter and its version. */
    record Python(Path path, String version) {}

    private PythonFinder() {}

    static Python find(ManagedSettings settings, Duration timeout, Consumer<Process> running)
            throws InterruptedException {
        if (!settings.python().isBlank()) {
            Path configured = Path.of(settings.python().strip());
            if (!Files.isRegularFile(configured)) {
                throw new ManagedBridgeException("no Python at " + configured + " (bridge.python): install Python "
                        + MIN_MAJOR + "." + MIN_MINOR + " or newer there or name another");
            }
            Python python = probe(configured, settings.dataFolder(), timeout, running);
            if (!newEnough(python.version())) {
                throw tooOld(python);
            }
            return python;
        }
        Python old = null;
        for (Path dir : settings.searchPath()) {
            for (String name : NAMES) {
                Path candidate = dir.resolve(name);
                if (!Files.isRegularFile(candidate) || !Files.isExecutable(candidate)) {
                    continue;
                }
                Python python;
                try {
                    python = probe(candidate, settings.dataFolder(), timeout, running);
                } catch (ManagedBridgeException exc) {
                    continue; // a broken one on PATH: another may work
                }
                if (newEnough(python.version())) {
                    return python;
                }
                if (old == null) {
                    old = python;
                }
            }
        }
        if (old != null) {
            throw tooOld(old);
        }
        throw new ManagedBridgeException("no Python found on PATH (looked for " + String.join(", ", NAMES)
                + "): install Python " + MIN_MAJOR + "." + MIN_MINOR + " or newer, or name one in bridge.python");
    }

    private static Python probe(Path python, Path dir, Duration timeout, Consumer<Process> running)
            throws InterruptedException {
        StepRun run;
        try {
            run = StepRun.run(List.of(python.toString(), "-c", PROBE), dir, timeout, running);
        } catch (IOException exc) {
            throw new ManagedBridgeException("cannot run " + python + ": " + exc.getMessage());
        }
        Matcher matcher = VERSION.matcher(run.lastLine());
        if (!run.ok() || !matcher.matches()) {
            throw new ManagedBridgeException(python + " does not run as Python (exit " + run.exitCode() + ": "
                    + run.lastLine() + ")");
        }
        return new Python(python, matcher.group());
    }

    static boolean newEnough(String version) {
        Matcher matcher = VERSION.matcher(version);
        if (!matcher.matches()) {
            return false;
        }
        int major = Integer.parseInt(matcher.group(1));
        int minor = Integer.parseInt(matcher.group(2));
        return major > MIN_MAJOR || major == MIN_MAJOR && minor >= MIN_MINOR;
    }

    private static ManagedBridgeException tooOld(Python python) {
        return new ManagedBridgeException("Python " + python.version() + " at " + python.path() + " is too old: the"
                + " bridge needs " + MIN_MAJOR + "." + MIN_MINOR + " or newer (install one, or name it in bridge.python)");
    }
}
