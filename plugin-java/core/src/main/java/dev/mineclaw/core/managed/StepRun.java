package dev.mineclaw.core.managed;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One install step run to its end (the version probe, {@code venv}, pip, {@code init}): its
 * output merged and kept bounded (the last {@value #KEPT_LINES} lines, each cut at
 * {@value #MAX_LINE_CHARS} characters), killed when it outlives its timeout.
 *
 * @param exitCode the exit code, or -1 when it timed out
 * @param tail the last lines of its output
 */
record StepRun(int exitCode, List<String> tail) {
    static final int KEPT_LINES = 40;
    static final int MAX_LINE_CHARS = 500;

    boolean ok() {
        return this.exitCode == 0;
    }

    /** Everything kept, as one text to look for pip's messages in. */
    String output() {
        return String.join("\n", this.tail);
    }

    /** The last non-blank line, for a one-line reason. */
    String lastLine() {
        for (int i = this.tail.size() - 1; i >= 0; i--) {
            if (!this.tail.get(i).isBlank()) {
                return this.tail.get(i).strip();
            }
        }
        return "(no output)";
    }

    /**
     * Runs {@code command} in {@code dir}; {@code running} is told the process, so a stop can end it.
     *
     * @throws IOException when it cannot be started at all
     */
    static StepRun run(List<String> command, Path dir, Duration timeout, Consumer<Process> running)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        cleanEnvironment(builder);
        Process process = builder.start();
        running.accept(process);
        process.getOutputStream().close(); // nothing is ever asked on stdin: pip's prompts end at once
        Deque<String> tail = new ArrayDeque<>();
        Thread reader = Thread.ofPlatform().daemon().name("mineclaw-bridge-step").start(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    synchronized (tail) {
                        tail.addLast(cut(line));
                        if (tail.size() > KEPT_LINES) {
                            tail.removeFirst();
                        }
                    }
                }
            } catch (IOException exc) {
                // the process ended and took its pipe: what was read is kept
            }
        });
        boolean ended = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!ended) {
            process.destroyForcibly().waitFor();
        }
        reader.join();
        synchronized (tail) {
            return new StepRun(ended ? process.exitValue() : -1, new ArrayList<>(tail));
        }
    }

    /**
     * The bridge's processes run with the server's environment minus what would make them import
     * another Python's packages than the venv's.
     */
    static void cleanEnvironment(ProcessBuilder builder) {
        builder.environment().remove("PYTHONPATH");
        builder.environment().remove("PYTHONHOME");
        builder.environment().remove("VIRTUAL_ENV");
        builder.environment().put("PYTHONUNBUFFERED", "1");
    }

    static String cut(String line) {
        return line.length() <= MAX_LINE_CHARS ? line : line.substring(0, MAX_LINE_CHARS) + "...";
    }
}
