package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void doublesUpToTheMaximumWithinTheJitterBand() {
        Backoff low = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 0.0);
        Backoff high = new Backoff(Duration.ofMillis(100), Duration.ofMillis(1000), () -> 1.0);
        long[] ceilings = {100, 200, 400, 800, 1000, 1000};
        for (long ceiling : ceilings) {
            assertEquals(ceiling / 2, low.next().toMillis());
            assertEquals(ceiling, high.next().toMillis());
        }
    }

    @Test
    void resetStartsOver() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), () -> 1.0);
        backoff.next();
        backoff.next();
        backoff.reset();
        assertEquals(100, backoff.next().toMillis());
        assertEquals(1, backoff.attempts());
    }

    @Test
    void manyAttemptsDoNotOverflow() {
        Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), () -> 1.0);
        for (int i = 0; i < 200; i++) {
            backoff.next();
        }
        assertEquals(30_000, backoff.next().toMillis());
    }

    @Test
    void nonsenseSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), () -> 0));
        assertThrows(IllegalArgumentException.class,
                () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), () -> 0));
    }
}
