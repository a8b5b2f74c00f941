package dev.mineclaw.core.gamefacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.support.FakePlatform;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GameFactsRequestsTest {
    private final FakePlatform platform = new FakePlatform();
    private final VanillaSample registry = new VanillaSample();
    private final GameFactsRequests requests = new GameFactsRequests(this.platform, this.registry,
            Duration.ofSeconds(10));

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private static JsonObject recipes(String item, String direction) {
        JsonObject data = new JsonObject();
        data.addProperty("item", item);
        data.addProperty("direction", direction);
        data.addProperty("limit", 5);
        data.addProperty("max_chars", 4000);
        return data;
    }

    private JsonObject ask(String item) throws Exception {
        return this.requests.recipes(recipes(item, "makes")).get(30, TimeUnit.SECONDS);
    }

    @Test
    void theRegistryIsReadOnTheGlobalExecutorOncePerStamp() throws Exception {
        java.util.concurrent.CompletableFuture<String> global = new java.util.concurrent.CompletableFuture<>();
        this.platform.runGlobal(() -> global.complete(Thread.currentThread().getName()));
        assertEquals(2, ask("beacon").get("total").getAsInt());
        assertEquals(2, ask("iron ingot").getAsJsonArray("recipes").size());
        JsonObject data = new JsonObject();
        data.addProperty("item", "beacon");
        assertEquals("minecraft:beacon", this.requests.item(data).get(30, TimeUnit.SECONDS)
                .getAsJsonObject("facts").get("key").getAsString());
        assertEquals(1, this.registry.reads.get());
        assertEquals(List.of(global.get(30, TimeUnit.SECONDS)), this.registry.readThreads);
    }

    @Test
    void aNewStampIsANewReading() throws Exception {
        assertEquals(2, ask("beacon").get("total").getAsInt());
        this.registry.facts = VanillaSample.facts(List.of(RecipeFacts.shapeless("datapack:cheap_beacon",
                "minecraft:beacon", 1, List.of(List.of("minecraft:glass")))));
        assertEquals(2, ask("beacon").get("total").getAsInt()); // same stamp: the kept index
        this.registry.stamp.incrementAndGet(); // a datapack reload
        assertEquals(3, ask("beacon").get("total").getAsInt());
        assertEquals(2, this.registry.reads.get());
    }

    @Test
    void aQuestionAskedAgainIsAnsweredFromTheKeptAnswerAsACopy() throws Exception {
        JsonObject first = ask("beacon");
        first.getAsJsonArray("recipes").remove(0); // what the link does with it is its own business
        first.addProperty("total", 99);
        JsonObject again = ask("beacon");
        assertEquals(2, again.get("total").getAsInt());
        assertEquals(2, again.getAsJsonArray("recipes").size());
        assertEquals(again, ask("beacon"));
        assertEquals(1, this.registry.reads.get());
    }

    @Test
    void aReadingThatFailsFailsTheRequestAndIsNotKept() throws Exception {
        VanillaSample broken = new VanillaSample() {
            @Override
            public RegistryFacts read() {
                super.read();
                throw new IllegalStateException("registry frozen");
            }
        };
        GameFactsRequests failing = new GameFactsRequests(this.platform, broken, Duration.ofSeconds(10));
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> failing.recipes(recipes("beacon", "makes")).get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, failed.getCause());
        assertThrows(ExecutionException.class, () -> failing.recipes(recipes("beacon", "makes"))
                .get(30, TimeUnit.SECONDS));
        assertEquals(2, broken.reads.get());
    }

    @Test
    void aServerThatNeverGetsToTheReadingTimesOut() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        this.platform.runGlobal(() -> {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException exc) {
                Thread.currentThread().interrupt();
            }
        });
        GameFactsRequests slow = new GameFactsRequests(this.platform, this.registry, Duration.ofMillis(50));
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> slow.recipes(recipes("beacon", "uses")).get(30, TimeUnit.SECONDS));
        assertInstanceOf(TimeoutException.class, failed.getCause());
        release.countDown();
        assertTrue(this.registry.reads.get() <= 1);
    }
}
