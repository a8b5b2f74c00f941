package dev.mineclaw.core.platform;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects what a console command writes back, within the protocol's bounds for
 * {@code command.dispatch} feedback (64 lines of at most 2048 characters), so that a chatty
 * command still gets an answer the codec accepts. Lines past the bound are counted and the last
 * kept line says how many were left out. Thread-safe: a server may write feedback from any thread.
 */
public final class FeedbackCollector {
    /** The protocol's bounds on {@code feedback}. */
    public static final int MAX_LINES = 64;
    public static final int MAX_LINE_CHARS = 2048;

    private final List<String> lines = new ArrayList<>();
    private int dropped;

    /** Records one line of feedback; null is ignored. */
    public synchronized void add(String line) {
        if (line == null) {
            return;
        }
        if (this.lines.size() >= MAX_LINES) {
            this.dropped++;
            return;
        }
        this.lines.add(clip(line));
    }

    /** The outcome with the lines so far; the last line notes any left out. */
    public synchronized ConsoleDispatch result(boolean dispatched) {
        List<String> out = new ArrayList<>(this.lines);
        if (this.dropped > 0) {
            // The marker replaces the last kept line, so the answer stays within MAX_LINES.
            out.set(out.size() - 1, "... " + (this.dropped + 1) + " more lines not shown");
        }
        return new ConsoleDispatch(dispatched, out);
    }

    private static String clip(String line) {
        if (line.length() <= MAX_LINE_CHARS) {
            return line;
        }
        int end = MAX_LINE_CHARS;
        // Never cut a surrogate pair in half: the codec refuses unpaired surrogates.
        if (Character.isHighSurrogate(line.charAt(end - 1))) {
            end--;
        }
        return line.substring(0, end);
    }
}
