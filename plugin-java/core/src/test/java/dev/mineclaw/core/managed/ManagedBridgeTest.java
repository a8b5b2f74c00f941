package dev.mineclaw.core.managed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mineclaw.core.managed.ManagedBridge.State;
import dev.mineclaw.core.managed.ManagedBridge.Status;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The managed bridge's steps with real processes: a fake Python (a shell script) that is missing,
 * too old, offline, or a bridge that serves, dies, or ignores SIGTERM. Tests wait for states, never
 * for durations; the class timeout is only a hang guard.
 */
@Timeout(120)
class ManagedBridgeTest {
    static final BridgeWheel WHEEL = new BridgeWheel("mineclaw_bridge-1.2.3-py3-none-any.whl",
            "not really a wheel".getBytes(StandardCharsets.UTF_8));

    @TempDir
    Path tmp;

    private final List<LogRecord> logged = new ArrayList<>();
    private final List<ManagedBridge> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        this.started.forEach(ManagedBridge::stop);
    }

    @Test
    void aConfiguredPythonThatIsMissingIsSaidInOneLine() throws Exception {
        Path missing = this.tmp.resolve("nowhere/python3");
        ManagedBridge bridge = start(settings(missing.toString(), List.of(), freePort()), Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertEquals("no Python at " + missing + " (bridge.python): install Python 3.11 or newer there or name"
                + " another", status.problem());
        assertOneSevereLine("managed bridge not started: no Python at " + missing);
    }

    @Test
    void noPythonOnPathIsSaid() throws Exception {
        Path empty = Files.createDirectories(this.tmp.resolve("empty-bin"));
        ManagedBridge bridge = start(settings("", List.of(empty), freePort()), Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertTrue(status.problem().startsWith("no Python found on PATH (looked for python3, "), status.problem());
        assertOneSevereLine("managed bridge not started: no Python found on PATH");
    }

    @Test
    void aPythonTooOldIsNamedWithItsVersion() throws Exception {
        FakePython fake = new FakePython();
        fake.version = "3.9.2";
        Path bin = this.tmp.resolve("bin");
        Path python = fake.write(bin, "python3");
        ManagedBridge bridge = start(settings("", List.of(bin), freePort()), Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertEquals("Python 3.9.2 at " + python + " is too old: the bridge needs 3.11 or newer (install one, or"
                + " name it in bridge.python)", status.problem());
        assertOneSevereLine("managed bridge not started: Python 3.9.2 at ");
    }

    @Test
    void aNewerPythonLaterOnPathWinsOverAnOldPython3() throws Exception {
        FakePython old = new FakePython();
        old.version = "3.8.10";
        old.write(this.tmp.resolve("old"), "python3");
        new FakePython().write(this.tmp.resolve("new"), "python3.12");
        ManagedBridge bridge = start(settings("", List.of(this.tmp.resolve("old"), this.tmp.resolve("new")),
                freePort()), Optional.of(WHEEL));
        bridge.await(s -> s.state() == State.RUNNING);
    }

    @Test
    void noNetworkForTheDependenciesIsSaidWithTheWheelhouseToFill() throws Exception {
        FakePython fake = new FakePython();
        fake.pip = "echo \"WARNING: Retrying after connection broken by 'NewConnectionError(': Failed to establish"
                + " a new connection: [Errno -3] Temporary failure in name resolution')'\"; echo 'ERROR: Could not find"
                + " a version that satisfies the requirement pydantic'; exit 1";
        Path python = fake.write(this.tmp.resolve("bin"), "python3");
        ManagedSettings settings = settings(python.toString(), List.of(), freePort());
        ManagedBridge bridge = start(settings, Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertEquals("no network to the package index for the bridge's dependencies: drop their wheels into "
                + settings.wheelhouse() + " (see docs/install.md) and restart", status.problem());
    }

    @Test
    void aWheelhouseIsUsedOfflineAndAMissingWheelInItIsSaid() throws Exception {
        FakePython fake = new FakePython();
        fake.pip = "echo 'ERROR: No matching distribution found for pydantic<3,>=2.7'; exit 1";
        Path python = fake.write(this.tmp.resolve("bin"), "python3");
        ManagedSettings settings = settings(python.toString(), List.of(), freePort());
        Files.createDirectories(settings.wheelhouse());
        Files.writeString(settings.wheelhouse().resolve("PyYAML-6.0.2-cp311-cp311-linux_x86_64.whl"), "x");
        ManagedBridge bridge = start(settings, Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertEquals("the wheelhouse " + settings.wheelhouse() + " lacks a dependency of the bridge: ERROR: No"
                + " matching distribution found for pydantic<3,>=2.7", status.problem());
        assertTrue(calls().stream().anyMatch(call -> call.contains("--no-index --find-links " + settings.wheelhouse())),
                String.join("\n", calls()));
    }

    @Test
    void aPythonWithoutVenvIsSaid() throws Exception {
        FakePython fake = new FakePython();
        fake.venv = "echo 'The virtual environment was not created successfully because ensurepip is not"
                + " available.'; exit 1";
        Path python = fake.write(this.tmp.resolve("bin"), "python3");
        ManagedBridge bridge = start(settings(python.toString(), List.of(), freePort()), Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertTrue(status.problem().startsWith("Python 3.11.7 could not make a virtual environment (on Debian and"
                + " Ubuntu: apt install python3-venv): The virtual environment was not created"), status.problem());
    }

    @Test
    void aJarWithoutTheWheelSaysSo() throws Exception {
        Path python = new FakePython().write(this.tmp.resolve("bin"), "python3");
        ManagedBridge bridge = start(settings(python.toString(), List.of(), freePort()), Optional.empty());
        Status status = bridge.await(s -> s.state() == State.FAILED);
        assertTrue(status.problem().startsWith("this jar carries no bridge wheel"), status.problem());
    }

    @Test
    void aTakenPortIsSaidAndTriedAgain() throws Exception {
        Path python = new FakePython().write(this.tmp.resolve("bin"), "python3");
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ManagedBridge bridge = start(settings(python.toString(), List.of(), taken.getLocalPort()),
                    Optional.of(WHEEL));
            Status status = bridge.await(s -> s.restarts() >= 2);
            assertEquals("port " + taken.getLocalPort() + " on 127.0.0.1 is taken (another program listens there:"
                    + " stop it, or give bridge-url another port)", status.problem());
            assertFalse(calls().stream().anyMatch(call -> call.contains("bridge serve")), "serve was not started");
        }
    }

    @Test
    void theFirstStartInstallsWritesTheTokenInitsAndServesWithItsOutputPrefixed() throws Exception {
        Path python = new FakePython().write(this.tmp.resolve("bin"), "python3");
        int port = freePort();
        ManagedSettings settings = settings(python.toString(), List.of(), port);
        ManagedBridge bridge = start(settings, Optional.of(WHEEL));
        Status status = bridge.await(s -> s.state() == State.RUNNING);
        assertEquals("1.2.3", status.version());
        assertEquals(0, status.restarts());
        Path token = settings.dataFolder().resolve("link.token");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(token)));
        assertEquals(43, Files.readString(token).strip().length());
        assertTrue(Files.exists(settings.dataFolder().resolve("config.yml")), "init ran");
        assertTrue(Files.exists(settings.venv().resolve(BridgeInstall.MARKER)));
        String serve = "-m bridge serve --config " + settings.dataFolder() + " --host 127.0.0.1 --port " + port;
        awaitLog(ManagedBridge.PREFIX + "listening on ws://127.0.0.1:" + port + "/link");
        assertTrue(calls().contains(serve), String.join("\n", calls()));
        List<String> lines = bridge.statusLines();
        assertTrue(lines.get(0).startsWith("managed bridge 1.2.3: running (pid " + status.pid() + "), up "),
                lines.toString());
        assertTrue(lines.get(0).endsWith(", 0 restarts"), lines.toString());
        ProcessHandle child = ProcessHandle.of(status.pid()).orElseThrow();
        bridge.stop();
        assertEquals(State.STOPPED, bridge.status().state());
        child.onExit().get();
        assertFalse(child.isAlive());
    }

    @Test
    void aSecondStartInstallsNothingAgain() throws Exception {
        Path python = new FakePython().write(this.tmp.resolve("bin"), "python3");
        ManagedSettings settings = settings(python.toString(), List.of(), freePort());
        ManagedBridge first = start(settings, Optional.of(WHEEL));
        first.await(s -> s.state() == State.RUNNING);
        first.stop();
        long pips = calls().stream().filter(call -> call.startsWith("-m pip")).count();
        ManagedBridge second = start(settings, Optional.of(WHEEL));
        second.await(s -> s.state() == State.RUNNING);
        assertEquals(pips, calls().stream().filter(call -> call.startsWith("-m pip")).count());
        assertEquals(1, calls().stream().filter(call -> call.startsWith("-m bridge init")).count());
    }

    @Test
    void aBridgeThatDiesIsStartedAgainWithTheRestartsCounted() throws Exception {
        ManagedBridge bridge = startServing("echo 'error: config.yml, line 3: bad'; exit 3");
        Status status = bridge.await(s -> s.restarts() >= 3);
        assertEquals("the bridge exited with code 3", status.problem());
        awaitLog(ManagedBridge.PREFIX + "error: config.yml, line 3: bad");
        assertTrue(calls().stream().filter(call -> call.startsWith("-m bridge serve")).count() >= 3);
        bridge.stop();
        assertTrue(bridge.statusLines().get(0).startsWith("managed bridge 1.2.3: stopped, "), bridge.statusLines()
                .toString());
    }

    @Test
    void aBridgeIgnoringSigtermIsKilledAfterTheBoundedWait() throws Exception {
        ManagedBridge bridge = startServing("trap '' TERM; echo up; while :; do sleep 1; done");
        bridge.await(s -> s.state() == State.RUNNING);
        awaitLog(ManagedBridge.PREFIX + "up");
        ProcessHandle child = ProcessHandle.of(bridge.status().pid()).orElseThrow();
        bridge.stop();
        child.onExit().get();
        assertTrue(this.logged.stream().anyMatch(r -> r.getLevel() == Level.WARNING
                && r.getMessage().startsWith("the managed bridge did not stop within")), messages().toString());
    }

    /** A bridge whose fake {@code serve} runs {@code script}. */
    private ManagedBridge startServing(String script) throws IOException {
        FakePython fake = new FakePython();
        fake.serve = script;
        Path python = fake.write(this.tmp.resolve("bin"), "python3");
        return start(settings(python.toString(), List.of(), freePort()), Optional.of(WHEEL));
    }

    private ManagedBridge start(ManagedSettings settings, Optional<BridgeWheel> wheel) {
        Logger log = Logger.getAnonymousLogger();
        log.setUseParentHandlers(false);
        log.addHandler(new Handler() {
            @Override
            public void publish(LogRecord record) {
                synchronized (ManagedBridgeTest.this.logged) {
                    ManagedBridgeTest.this.logged.add(record);
                    ManagedBridgeTest.this.logged.notifyAll();
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        ManagedBridge bridge = new ManagedBridge(settings, wheel, log);
        this.started.add(bridge);
        bridge.start();
        return bridge;
    }

    private ManagedSettings settings(String python, List<Path> path, int port) throws IOException {
        Path data = Files.createDirectories(this.tmp.resolve("plugins/Mineclaw"));
        return new ManagedSettings(python, path, data, data.resolve("wheelhouse"), "127.0.0.1", port,
                Duration.ofMillis(10), Duration.ofMillis(40), Duration.ofMillis(200), Duration.ofMinutes(1));
    }

    private List<String> calls() throws IOException {
        List<String> all = new ArrayList<>();
        try (var files = Files.walk(this.tmp)) {
            for (Path log : files.filter(p -> p.getFileName().toString().equals("calls.log")).toList()) {
                all.addAll(Files.readAllLines(log));
            }
        }
        return all;
    }

    private List<String> messages() {
        synchronized (this.logged) {
            return this.logged.stream().map(LogRecord::getMessage).toList();
        }
    }

    private void awaitLog(String line) throws InterruptedException {
        synchronized (this.logged) {
            while (this.logged.stream().noneMatch(r -> r.getMessage().equals(line))) {
                this.logged.wait();
            }
        }
    }

    private void assertOneSevereLine(String start) {
        List<String> severe = this.logged.stream().filter(r -> r.getLevel() == Level.SEVERE)
                .map(LogRecord::getMessage).toList();
        assertEquals(1, severe.size(), severe.toString());
        assertTrue(severe.get(0).startsWith(start), severe.get(0));
        assertTrue(severe.get(0).endsWith("; Mineclaw runs unlinked"), severe.get(0));
        assertFalse(severe.get(0).contains("\n"), severe.get(0));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
