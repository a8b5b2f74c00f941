package dev.mineclaw.testkit;

import dev.mineclaw.core.platform.PlayerRef;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One online player of the stand-in server, with its own executor thread (Folia's entity
 * scheduler). Identity and permissions are fixed; the snapshot facts are one immutable value that
 * {@code player.set} replaces whole.
 */
final class TestPlayer {
    private static final Logger LOG = Logger.getLogger(TestPlayer.class.getName());

    private final PlayerRef ref;
    private final Set<String> permissions;
    private final ExecutorService executor;
    private volatile TestFacts facts;
    private volatile Thread thread;
    private volatile boolean gone;

    TestPlayer(PlayerRef ref, Set<String> permissions) {
        this(ref, permissions, TestFacts.defaults());
    }

    TestPlayer(PlayerRef ref, Set<String> permissions, TestFacts facts) {
        this.ref = ref;
        this.facts = facts;
        this.permissions = Set.copyOf(permissions);
        this.executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread created = new Thread(runnable, "player-" + ref.name());
            created.setDaemon(true);
            this.thread = created;
            return created;
        });
    }

    PlayerRef ref() {
        return this.ref;
    }

    Set<String> permissions() {
        return this.permissions;
    }

    TestFacts facts() {
        return this.facts;
    }

    void facts(TestFacts replacement) {
        this.facts = replacement;
    }

    Thread thread() {
        return this.thread;
    }

    boolean gone() {
        return this.gone;
    }

    /** Runs {@code task} on this player's thread, or {@code whenGone} if they left before it ran. */
    void run(Runnable task, Runnable whenGone) {
        if (this.gone) {
            whenGone.run();
            return;
        }
        try {
            this.executor.execute(() -> {
                try {
                    if (this.gone) {
                        whenGone.run();
                    } else {
                        task.run();
                    }
                } catch (RuntimeException exc) {
                    // Reported by ThreadRules or the caller already; keep the thread alive.
                    LOG.log(Level.WARNING, "task for " + this.ref.name() + " failed", exc);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException exc) {
            whenGone.run();
        }
    }

    /** Marks the player gone; work already queued sees that and runs its gone-callback instead. */
    void leave() {
        this.gone = true;
        this.executor.shutdown();
    }

    void awaitStopped() throws InterruptedException {
        this.executor.awaitTermination(5, TimeUnit.SECONDS);
    }
}
