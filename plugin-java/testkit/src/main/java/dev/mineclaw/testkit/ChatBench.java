package dev.mineclaw.testkit;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.platform.PlayerRef;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends {@code chat} requests at a fixed rate, each at its planned time (start + i / rate), not
 * after the previous answer, and measures each round trip from just before the send to the
 * verdict with {@link System#nanoTime()}.
 */
final class ChatBench {
    /**
     * What one run measured; latencies in microseconds. {@code firstError} describes the first
     * request that failed (null when none did), so a failed run says why.
     */
    record Result(int count, int errors, long p50Micros, long p99Micros, long maxMicros, String firstError) {}

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private ChatBench() {}

    static Result run(BridgeLink link, PlayerRef player, List<String> granted, String text, int rate, double seconds)
            throws InterruptedException {
        int total = (int) Math.round(rate * seconds);
        long[] micros = new long[total];
        Arrays.fill(micros, -1);
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicReference<String> firstError = new AtomicReference<>();
        CompletableFuture<?>[] all = new CompletableFuture<?>[total];
        JsonObject data = chatData(player, granted, text);
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) / rate;
        long start = System.nanoTime();
        for (int i = 0; i < total; i++) {
            long planned = start + i * intervalNanos;
            long wait;
            while ((wait = planned - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            int index = i;
            long sent = System.nanoTime();
            all[i] = link.request("chat", data.deepCopy(), REQUEST_TIMEOUT).whenComplete((answer, error) -> {
                if (error == null) {
                    micros[index] = (System.nanoTime() - sent) / 1000;
                    answered.incrementAndGet();
                } else {
                    micros[index] = -1;
                    errors.incrementAndGet();
                    Throwable cause = error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error;
                    firstError.compareAndSet(null, "request " + index + ": " + cause);
                }
            });
        }
        try {
            CompletableFuture.allOf(all).get(REQUEST_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException exc) {
            // Individual failures are counted in errors; nothing more to do here.
        }
        long[] ok = Arrays.stream(micros).filter(value -> value >= 0).sorted().toArray();
        return new Result(answered.get(), errors.get(), percentile(ok, 50), percentile(ok, 99),
                ok.length == 0 ? 0 : ok[ok.length - 1], firstError.get());
    }

    /** The nearest-rank percentile of sorted values, 0 when there are none. */
    static long percentile(long[] sorted, int percent) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static JsonObject chatData(PlayerRef player, List<String> granted, String text) {
        JsonArray nodes = new JsonArray();
        granted.forEach(nodes::add);
        JsonObject data = new JsonObject();
        data.add("player", player.toJson());
        data.add("granted", nodes);
        data.addProperty("text", text);
        return data;
    }
}
