package dev.mineclaw.core.platform;

import java.util.List;

/**
 * The outcome of a console command: whether the server accepted it as a command, and the
 * feedback lines it wrote to the capturing sender. Immutable.
 */
public record ConsoleDispatch(boolean dispatched, List<String> feedback) {
    public ConsoleDispatch {
        feedback = List.copyOf(feedback);
    }
}
