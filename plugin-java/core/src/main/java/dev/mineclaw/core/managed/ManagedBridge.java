package dev.mineclaw.core.managed;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.logging.Logger;

/**
 * The bridge the plugin runs itself ({@code bridge.managed: true}): on {@link #start()} it finds a
 * Python, installs the jar's wheel into a venv under the data folder, writes the link token and
 * {@code init}s the folder on first start, then runs {@code serve} as a child whose output goes
 * to the server log under {@value #PREFIX}, starting it again with a doubling backoff when it
 * dies. Every step runs on the manager's own thread, never the server's. A step that fails is
 * said in one console line and the plugin goes on unlinked. {@link #stop()} sends SIGTERM, waits
 * a bounded time, then kills.
 */
public final class ManagedBridge {
    public static final String PREFIX = "[bridge] ";
    /** A child that ran this long was healthy: its next death waits only the first backoff. */
    static final Duration STABLE = Duration.ofSeconds(60);

    /** Where the managed bridge is. */
    public enum State {
        /** Not started yet. */
        IDLE,
        /** Finding Python, making the venv, installing, init. */
        INSTALLING,
        /** {@code serve} runs. */
        RUNNING,
        /** It died (or its port was taken); the next start is scheduled. */
        WAITING,
        /** A step that a restart cannot fix failed; the plugin runs unlinked. */
        FAILED,
        /** The server stops it. */
        STOPPED
    }

    /**
     * What {@code /mineclaw bridge status} shows.
     *
     * @param uptime how long the current child has run, or null when none runs
     * @param problem the last failure's line, or null
     */
    public record Status(State state, Duration uptime, int restarts, String version, String problem, long pid) {}

    private final ManagedSettings settings;
    private final Optional<BridgeWheel> wheel;
    private final Logger log;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread made = new Thread(runnable, "mineclaw-managed-bridge");
        made.setDaemon(true);
        return made;
    });
    private State state = State.IDLE;
    private Process process;   // the current step or serve
    private long startedNanos;
    private int restarts;
    private String problem;
    private Duration backoff;
    private Path venvPython;

    /** @param wheel the jar's wheel, empty for a jar built without one */
    public ManagedBridge(ManagedSettings settings, Optional<BridgeWheel> wheel, Logger log) {
        this.settings = settings;
        this.wheel = wheel;
        this.log = log;
        this.backoff = settings.firstBackoff();
    }

    /** Installs and starts the bridge on the manager's thread; returns at once. */
    public void start() {
        this.thread.execute(this::installAndServe);
    }

    /** The state now, from any thread. */
    public synchronized Status status() {
        Duration uptime = this.state == State.RUNNING
                ? Duration.ofNanos(System.nanoTime() - this.startedNanos) : null;
        long pid = this.state == State.RUNNING && this.process != null ? this.process.pid() : -1;
        return new Status(this.state, uptime, this.restarts, this.wheel.map(BridgeWheel::version).orElse("none"),
                this.problem, pid);
    }

    /** The lines of {@code /mineclaw bridge status}. */
    public List<String> statusLines() {
        Status status = status();
        List<String> lines = new ArrayList<>();
        StringBuilder first = new StringBuilder("managed bridge " + status.version() + ": "
                + status.state().name().toLowerCase(java.util.Locale.ROOT));
        if (status.pid() >= 0) {
            first.append(" (pid ").append(status.pid()).append(")");
        }
        if (status.uptime() != null) {
            first.append(", up ").append(human(status.uptime()));
        }
        first.append(", ").append(status.restarts()).append(status.restarts() == 1 ? " restart" : " restarts");
        lines.add(first.toString());
        if (status.problem() != null) {
            lines.add("last problem: " + status.problem());
        }
        return lines;
    }

    /**
     * Blocks until {@code condition} holds for the status (tests and the adapter's shutdown wait
     * on events, never on durations).
     */
    public synchronized Status await(Predicate<Status> condition) throws InterruptedException {
        while (!condition.test(status())) {
            wait();
        }
        return status();
    }

    /**
     * Stops the bridge: SIGTERM, at most {@link ManagedSettings#stopWait()} for it to end, then a
     * kill. Nothing starts again afterwards. Called once, on disable.
     */
    public void stop() {
        Process child;
        synchronized (this) {
            if (this.state == State.STOPPED) {
                return;
            }
            move(State.STOPPED, null);
            child = this.process;
        }
        this.thread.shutdownNow();
        if (child == null || !child.isAlive()) {
            return;
        }
        child.destroy(); // SIGTERM: serve closes the link and its stores
        try {
            if (!child.waitFor(this.settings.stopWait().toMillis(), TimeUnit.MILLISECONDS)) {
                this.log.warning("the managed bridge did not stop within " + this.settings.stopWait().toSeconds()
                        + " s of SIGTERM: killed");
                child.destroyForcibly();
            }
        } catch (InterruptedException exc) {
            child.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private void installAndServe() {
        if (!moveIfNotStopped(State.INSTALLING, null)) {
            return;
        }
        try {
            if (this.wheel.isEmpty()) {
                throw new ManagedBridgeException("this jar carries no bridge wheel (a development build): build the"
                        + " plugin with make plugin or use a release jar");
            }
            PythonFinder.Python python = PythonFinder.find(this.settings, this.settings.stepTimeout(), this::current);
            BridgeInstall install = new BridgeInstall(this.settings, this::current);
            Path venvPython = install.install(python, this.wheel.get(), this::say);
            install.firstStart(venvPython, this::say);
            this.venvPython = venvPython;
        } catch (ManagedBridgeException exc) {
            fail(exc.getMessage());
            return;
        } catch (InterruptedException exc) {
            return; // stopped while installing
        }
        serve();
    }

    private void serve() {
        synchronized (this) {
            if (this.state == State.STOPPED) {
                return;
            }
        }
        String taken = portTaken();
        if (taken != null) {
            waitAndServe(taken);
            return;
        }
        List<String> command = List.of(this.venvPython.toString(), "-m", "bridge", "serve", "--config",
                this.settings.dataFolder().toString(), "--host", this.settings.host(),
                "--port", Integer.toString(this.settings.port()));
        ProcessBuilder builder = new ProcessBuilder(command).directory(this.settings.dataFolder().toFile())
                .redirectErrorStream(true);
        StepRun.cleanEnvironment(builder);
        Process child;
        try {
            child = builder.start();
        } catch (IOException exc) {
            fail("cannot start the bridge: " + exc.getMessage());
            return;
        }
        synchronized (this) {
            this.process = child;
            this.startedNanos = System.nanoTime();
            if (this.state == State.STOPPED) {
                child.destroy();
                return;
            }
            move(State.RUNNING, null);
        }
        Thread.ofPlatform().daemon().name("mineclaw-managed-bridge-output").start(() -> follow(child));
    }

    /** The child's lines into the server log, then what its end means. */
    private void follow(Process child) {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                this.log.info(PREFIX + StepRun.cut(line));
            }
        } catch (IOException exc) {
            // the pipe closed with the process
        }
        int code;
        try {
            code = child.waitFor();
        } catch (InterruptedException exc) {
            return;
        }
        Duration ran = Duration.ofNanos(System.nanoTime() - this.startedNanos);
        synchronized (this) {
            if (this.state == State.STOPPED) {
                return;
            }
            if (ran.compareTo(STABLE) >= 0) {
                this.backoff = this.settings.firstBackoff();
            }
        }
        waitAndServe("the bridge exited with code " + code);
    }

    private void waitAndServe(String why) {
        Duration delay;
        synchronized (this) {
            if (this.state == State.STOPPED) {
                return;
            }
            delay = this.backoff;
            this.backoff = min(this.backoff.multipliedBy(2), this.settings.maxBackoff());
            this.restarts++;
            this.log.warning(why + "; starting it again in " + human(delay) + " (restart " + this.restarts + ")");
            move(State.WAITING, why);
        }
        try {
            this.thread.schedule(this::serve, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException exc) {
            // stopped meanwhile
        }
    }

    /** The one line saying why the port cannot be had, or null when it is free. */
    private String portTaken() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(this.settings.host(), this.settings.port()));
            return null;
        } catch (IOException exc) {
            return "port " + this.settings.port() + " on " + this.settings.host() + " is taken (another program"
                    + " listens there: stop it, or give bridge-url another port)";
        }
    }

    private void fail(String line) {
        synchronized (this) {
            if (this.state == State.STOPPED) {
                return;
            }
            // Said before the state moves: whoever waits for FAILED finds the line logged.
            this.log.severe("managed bridge not started: " + line + "; Mineclaw runs unlinked");
            move(State.FAILED, line);
        }
    }

    private void say(String line) {
        this.log.info("managed bridge: " + line);
    }

    private synchronized void current(Process step) {
        this.process = step;
        if (this.state == State.STOPPED) {
            step.destroyForcibly();
        }
    }

    private synchronized boolean moveIfNotStopped(State next, String why) {
        if (this.state == State.STOPPED) {
            return false;
        }
        move(next, why);
        return true;
    }

    private synchronized void move(State next, String why) {
        this.state = next;
        if (why != null) {
            this.problem = why;
        }
        notifyAll();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    static String human(Duration duration) {
        long seconds = duration.toSeconds();
        if (seconds < 1) {
            return duration.toMillis() + " ms";
        }
        if (seconds < 60) {
            return seconds + " s";
        }
        if (seconds < 3600) {
            return seconds / 60 + " min " + seconds % 60 + " s";
        }
        return seconds / 3600 + " h " + seconds / 60 % 60 + " min";
    }
}
