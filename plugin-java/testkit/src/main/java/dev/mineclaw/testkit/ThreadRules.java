package dev.mineclaw.testkit;

import dev.mineclaw.core.platform.ThreadRuleException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Folia's thread rules, enforced: a player is touched only on that player's thread, the console
 * and broadcasts only on the global thread. A violation is recorded, reported, and thrown, so the
 * code that made it fails where it stands.
 */
final class ThreadRules {
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Consumer<String> reporter;
    private volatile Thread global;

    ThreadRules(Consumer<String> reporter) {
        this.reporter = reporter;
    }

    void globalThread(Thread thread) {
        this.global = thread;
    }

    void requireGlobal(String what) {
        if (Thread.currentThread() != this.global) {
            violation(what + " must run on the global thread, not on " + Thread.currentThread().getName());
        }
    }

    void requirePlayer(TestPlayer player, String what) {
        if (Thread.currentThread() != player.thread()) {
            violation(what + " for " + player.ref().name() + " must run on that player's thread, not on "
                    + Thread.currentThread().getName());
        }
    }

    List<String> violations() {
        return List.copyOf(this.violations);
    }

    private void violation(String message) {
        this.violations.add(message);
        this.reporter.accept(message);
        throw new ThreadRuleException(message);
    }
}
