package dev.mineclaw.core.managed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Makes the venv under {@code managed/venv}, installs the jar's wheel into it (again only when the
 * wheel changed), writes {@code link.token} and runs {@code init} for the data folder on first
 * start. Each failure is a {@link ManagedBridgeException} with the console line.
 */
final class BridgeInstall {
    /** What pip prints when the index cannot be reached (urllib3's and the resolver's own words). */
    private static final List<String> OFFLINE_SIGNS = List.of("failed to establish a new connection",
            "temporary failure in name resolution", "name or service not known", "network is unreachable",
            "max retries exceeded", "connection refused", "connecttimeout", "read timed out",
            "no address associated with hostname");
    static final String MARKER = ".mineclaw-wheel";
    static final String TOKEN_FILE = "link.token";

    private final ManagedSettings settings;
    private final Consumer<Process> running;

    BridgeInstall(ManagedSettings settings, Consumer<Process> running) {
        this.settings = settings;
        this.running = running;
    }

    /** The venv's Python, the wheel installed in it. */
    Path install(PythonFinder.Python python, BridgeWheel wheel, Consumer<String> say) throws InterruptedException {
        Path venv = this.settings.venv();
        Path venvPython = venv.resolve("bin").resolve("python");
        String marker = wheel.fileName() + " " + sha256(wheel.bytes());
        if (Files.isRegularFile(venvPython) && marker.equals(read(venv.resolve(MARKER)))) {
            return venvPython;
        }
        try {
            Files.createDirectories(venv.getParent());
        } catch (IOException exc) {
            throw new ManagedBridgeException("cannot make " + venv.getParent() + ": " + exc.getMessage());
        }
        if (!Files.isRegularFile(venvPython)) {
            say.accept("making the bridge's virtual environment in " + venv + " with Python " + python.version());
            StepRun made = step(List.of(python.path().toString(), "-m", "venv", venv.toString()));
            if (!made.ok() || !Files.isRegularFile(venvPython)) {
                throw new ManagedBridgeException("Python " + python.version() + " could not make a virtual environment"
                        + " (on Debian and Ubuntu: apt install python3-venv): " + made.lastLine());
            }
        }
        Path wheelFile = venv.getParent().resolve(wheel.fileName());
        try {
            Files.write(wheelFile, wheel.bytes());
        } catch (IOException exc) {
            throw new ManagedBridgeException("cannot write " + wheelFile + ": " + exc.getMessage());
        }
        List<String> pip = new ArrayList<>(List.of(venvPython.toString(), "-m", "pip", "install",
                "--disable-pip-version-check", "--no-input", "--quiet"));
        boolean offline = hasWheels(this.settings.wheelhouse());
        if (offline) {
            pip.addAll(List.of("--no-index", "--find-links", this.settings.wheelhouse().toString()));
        }
        pip.add(wheelFile.toString());
        say.accept("installing the bridge " + wheel.version() + (offline
                ? " with its dependencies from " + this.settings.wheelhouse()
                : " with its dependencies from the package index"));
        StepRun installed = step(pip);
        if (!installed.ok()) {
            throw new ManagedBridgeException(pipFailure(installed, offline));
        }
        try {
            Files.writeString(venv.resolve(MARKER), marker, StandardCharsets.UTF_8);
        } catch (IOException exc) {
            throw new ManagedBridgeException("cannot write " + venv.resolve(MARKER) + ": " + exc.getMessage());
        }
        return venvPython;
    }

    /** {@code link.token} (0600, never overwritten) and {@code init}'s default files, once. */
    void firstStart(Path venvPython, Consumer<String> say) throws InterruptedException {
        Path folder = this.settings.dataFolder();
        writeToken(folder.resolve(TOKEN_FILE));
        if (Files.exists(folder.resolve("config.yml"))) {
            return;
        }
        say.accept("first start: writing the bridge's default files into " + folder);
        StepRun init = step(List.of(venvPython.toString(), "-m", "bridge", "init", "--config", folder.toString()));
        if (!init.ok()) {
            throw new ManagedBridgeException("the bridge's init failed for " + folder + ": " + init.lastLine());
        }
    }

    static void writeToken(Path file) {
        if (Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(random) + "\n";
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, token, StandardCharsets.US_ASCII, StandardOpenOption.TRUNCATE_EXISTING,
                    java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (FileAlreadyExistsException exc) {
            // made meanwhile (by a bridge started by hand): that one is used
        } catch (IOException | UnsupportedOperationException exc) {
            throw new ManagedBridgeException("cannot write the link token " + file + ": " + exc.getMessage());
        }
    }

    private String pipFailure(StepRun run, boolean offline) {
        String output = run.output().toLowerCase(Locale.ROOT);
        if (run.exitCode() == -1) {
            return "installing the bridge took longer than " + this.settings.stepTimeout().toMinutes()
                    + " min and was stopped";
        }
        if (offline && (output.contains("no matching distribution") || output.contains("could not find a version"))) {
            return "the wheelhouse " + this.settings.wheelhouse() + " lacks a dependency of the bridge: "
                    + run.lastLine();
        }
        if (!offline && OFFLINE_SIGNS.stream().anyMatch(output::contains)) {
            return "no network to the package index for the bridge's dependencies: drop their wheels into "
                    + this.settings.wheelhouse() + " (see docs/install.md) and restart";
        }
        return "pip could not install the bridge (exit " + run.exitCode() + "): " + run.lastLine();
    }

    private StepRun step(List<String> command) throws InterruptedException {
        try {
            return StepRun.run(command, this.settings.dataFolder(), this.settings.stepTimeout(), this.running);
        } catch (IOException exc) {
            throw new ManagedBridgeException("cannot run " + command.get(0) + ": " + exc.getMessage());
        }
    }

    private static boolean hasWheels(Path wheelhouse) {
        if (!Files.isDirectory(wheelhouse)) {
            return false;
        }
        try (Stream<Path> files = Files.list(wheelhouse)) {
            return files.anyMatch(file -> file.getFileName().toString().endsWith(".whl"));
        } catch (IOException exc) {
            return false;
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException exc) {
            return "";
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException exc) {
            throw new IllegalStateException("every JVM has SHA-256", exc);
        }
    }
}
