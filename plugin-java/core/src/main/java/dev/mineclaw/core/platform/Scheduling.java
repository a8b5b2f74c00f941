package dev.mineclaw.core.platform;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs work on the executor the thread rules require and hands back a future, so callers on any
 * thread can wait for an immutable result without touching the world themselves.
 */
public final class Scheduling {
    private Scheduling() {}

    /**
     * Computes {@code work} on {@code player}'s executor. The future fails with {@link
     * PlayerGoneException} if the player is offline or leaves first, and with {@link
     * java.util.concurrent.TimeoutException} after {@code timeout}.
     */
    public static <T> CompletableFuture<T> onPlayer(Platform platform, UUID player, Duration timeout, Supplier<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        platform.runForPlayer(player, () -> complete(result, work),
                () -> result.completeExceptionally(new PlayerGoneException(player)));
        return result.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Computes {@code work} on the global executor, failing after {@code timeout}. */
    public static <T> CompletableFuture<T> onGlobal(Platform platform, Duration timeout, Supplier<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        platform.runGlobal(() -> complete(result, work));
        return result.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static <T> void complete(CompletableFuture<T> result, Supplier<T> work) {
        try {
            result.complete(work.get());
        } catch (RuntimeException exc) {
            result.completeExceptionally(exc);
        }
    }
}
