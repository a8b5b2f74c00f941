package dev.mineclaw.core.link;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Jittered exponential backoff: attempt n waits a random time between half and all of
 * {@code min(max, initial * 2^n)}, so many servers restarted together do not reconnect in step.
 * Not thread-safe; the link uses it from one thread at a time.
 */
public final class Backoff {
    private final long initialMillis;
    private final long maxMillis;
    private final DoubleSupplier random;
    private int attempt;

    public Backoff(Duration initial, Duration max, DoubleSupplier random) {
        if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < initial <= max");
        }
        this.initialMillis = initial.toMillis();
        this.maxMillis = max.toMillis();
        this.random = random;
    }

    /** The delay before the next attempt; each call doubles the ceiling up to the maximum. */
    public Duration next() {
        long ceiling = this.maxMillis;
        if (this.attempt < 32) {
            ceiling = Math.min(this.maxMillis, this.initialMillis << this.attempt);
        }
        this.attempt++;
        long delay = (long) (ceiling * (0.5 + 0.5 * this.random.getAsDouble()));
        return Duration.ofMillis(Math.max(1, delay));
    }

    /** Starts again from the initial delay (after a successful handshake). */
    public void reset() {
        this.attempt = 0;
    }

    /** How many delays were handed out since the last reset. */
    public int attempts() {
        return this.attempt;
    }
}
