package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.link.LinkException;
import dev.mineclaw.core.platform.PlayerRef;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/** The bench's accounting; the link is a fake because the bench does not own it. */
class ChatBenchTest {
    private static final PlayerRef STEVE = new PlayerRef(UUID.randomUUID(), "Steve");

    /** Answers every request at once, except the ones whose number {@code fails} picks. */
    private static BridgeLink link(IntPredicate fails) {
        AtomicInteger sent = new AtomicInteger();
        return new BridgeLink() {
            @Override
            public boolean isUp() {
                return true;
            }

            @Override
            public CompletableFuture<JsonObject> request(String type, JsonObject data, Duration timeout) {
                int number = sent.getAndIncrement();
                if (fails.test(number)) {
                    return CompletableFuture.failedFuture(LinkException.timeout("chat got no answer in 10000 ms"));
                }
                JsonObject verdict = new JsonObject();
                verdict.addProperty("decision", "pass");
                return CompletableFuture.completedFuture(verdict);
            }

            @Override
            public boolean sendEvent(String type, JsonObject data) {
                return true;
            }
        };
    }

    @Test
    void aCleanRunHasNoFirstError() throws InterruptedException {
        ChatBench.Result result = ChatBench.run(link(number -> false), STEVE, List.of(), "hello", 1000, 0.02);
        assertEquals(20, result.count());
        assertEquals(0, result.errors());
        assertNull(result.firstError());
        assertTrue(result.p50Micros() <= result.p99Micros() && result.p99Micros() <= result.maxMicros());
    }

    @Test
    void everyRequestIsAnsweredOrCountedAndTheFirstFailureSaysWhy() throws InterruptedException {
        ChatBench.Result result = ChatBench.run(link(number -> number == 3 || number == 7), STEVE, List.of(), "hello",
                1000, 0.02);
        assertEquals(18, result.count());
        assertEquals(2, result.errors());
        assertTrue(result.firstError().startsWith("request 3: "), result.firstError());
        assertTrue(result.firstError().contains("no answer in 10000 ms"), result.firstError());
    }
}
