package dev.mineclaw.testkit;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** The testkit main class in its own JVM, driven over stdin/stdout like the Python tests do. */
final class TestkitProcess implements AutoCloseable {
    private static final long WAIT_SECONDS = 30;

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<JsonObject> events = new LinkedBlockingQueue<>();
    private final List<JsonObject> seen = new CopyOnWriteArrayList<>();
    private final List<String> stderr = new CopyOnWriteArrayList<>();

    private TestkitProcess(Process process) {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread out = new Thread(() -> read(new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)), true), "testkit-stdout");
        Thread err = new Thread(() -> read(new BufferedReader(
                new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8)), false), "testkit-stderr");
        out.setDaemon(true);
        err.setDaemon(true);
        out.start();
        err.start();
    }

    static TestkitProcess start(String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                TestkitMain.class.getName()));
        command.addAll(List.of(args));
        return new TestkitProcess(new ProcessBuilder(command).start());
    }

    private void read(BufferedReader reader, boolean events) {
        try {
            String line;
            while ((line = reader.readLine()) != null) {
                if (events) {
                    JsonObject event = JsonParser.parseString(line).getAsJsonObject();
                    this.seen.add(event);
                    this.events.add(event);
                } else {
                    this.stderr.add(line);
                }
            }
        } catch (IOException | RuntimeException exc) {
            this.stderr.add("reader failed: " + exc);
        }
    }

    void send(String line) throws IOException {
        this.stdin.write(line + "\n");
        this.stdin.flush();
    }

    /** The next event matching {@code matches}, skipping others; fails after a bounded wait. */
    JsonObject await(Predicate<JsonObject> matches, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            long left = deadline - System.nanoTime();
            JsonObject event = left > 0 ? this.events.poll(left, TimeUnit.NANOSECONDS) : null;
            if (event == null) {
                throw new AssertionError("no " + what + " within " + WAIT_SECONDS + " s; stderr:\n"
                        + String.join("\n", this.stderr));
            }
            if (matches.test(event)) {
                return event;
            }
        }
    }

    JsonObject await(String name) throws InterruptedException {
        return await(event -> name.equals(event.get("event").getAsString()), name);
    }

    List<JsonObject> seen() {
        return this.seen;
    }

    int waitForExit() throws InterruptedException {
        if (!this.process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            this.process.destroyForcibly();
            throw new AssertionError("the testkit did not exit within " + WAIT_SECONDS + " s");
        }
        return this.process.exitValue();
    }


    // Not declared to throw InterruptedException (see TestBridge#close); an interrupt is passed on.
    @Override
    public void close() {
        if (this.process.isAlive()) {
            this.process.destroyForcibly();
            try {
                this.process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException exc) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
