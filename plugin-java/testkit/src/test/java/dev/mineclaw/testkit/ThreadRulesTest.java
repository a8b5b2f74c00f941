package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.Scheduling;
import dev.mineclaw.core.platform.ThreadRuleException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import net.kyori.adventure.text.Component;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The stand-in server refuses, records and reports every access from the wrong thread. */
class ThreadRulesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<String> reported = new CopyOnWriteArrayList<>();
    private final List<JsonObject> events = new CopyOnWriteArrayList<>();
    private final ThreadRules rules = new ThreadRules(this.reported::add);
    private final TestkitPlatform platform = new TestkitPlatform("testkit", this.events::add, this.rules);
    private final PlayerRef steve = join("Steve");
    private final PlayerRef alex = join("Alex");

    private PlayerRef join(String name) {
        PlayerRef ref = new PlayerRef(UUID.randomUUID(), name);
        this.platform.add(new TestPlayer(ref, Set.of("mineclaw.command.chat"), FactsOp.initial(
                new ItemSnapshot("minecraft:diamond_sword", 1, "Excalibur"),
                new BlockSnapshot("minecraft:oak_log", "world", 1, 64, -3), new JsonObject())));
        return ref;
    }

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private <T> T onPlayer(PlayerRef player, java.util.function.Supplier<T> work) throws Exception {
        return Scheduling.onPlayer(this.platform, player.uuid(), WAIT, work).get(10, TimeUnit.SECONDS);
    }

    private <T> T onGlobal(java.util.function.Supplier<T> work) throws Exception {
        return Scheduling.onGlobal(this.platform, WAIT, work).get(10, TimeUnit.SECONDS);
    }

    @Test
    void playerAccessFromATestThreadIsRefusedRecordedAndReported() {
        ThreadRuleException refused = assertThrows(ThreadRuleException.class,
                () -> this.platform.sendMessage(this.steve.uuid(), Component.text("hi")));
        assertTrue(refused.getMessage().contains("sendMessage for Steve"), refused.getMessage());
        assertEquals(List.of(refused.getMessage()), this.rules.violations());
        assertEquals(List.of(refused.getMessage()), this.reported);
        assertTrue(this.events.isEmpty(), "nothing may be shown by a refused call");
    }

    @Test
    void playerAccessOnTheirOwnThreadWorks() throws Exception {
        assertEquals("minecraft:diamond_sword", onPlayer(this.steve, () -> this.platform.inventory(this.steve.uuid()))
                .slots().get(0).type());
        assertEquals(64, onPlayer(this.steve, () -> this.platform.lookedAtBlock(this.steve.uuid(), 5)).block().y());
        assertTrue(onPlayer(this.steve, () -> this.platform.hasPermission(this.steve.uuid(), "mineclaw.command.chat")));
        onPlayer(this.steve, () -> {
            this.platform.sendMessage(this.steve.uuid(), Component.text("hello"));
            return null;
        });
        assertEquals("{\"event\":\"message\",\"to\":\"Steve\",\"text\":\"hello\"}", this.events.get(0).toString());
        assertTrue(this.rules.violations().isEmpty(), this.rules.violations().toString());
    }

    @Test
    void anotherPlayersThreadIsTheWrongThread() {
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> onPlayer(this.alex, () -> this.platform.hasPermission(this.steve.uuid(), "x")));
        assertInstanceOf(ThreadRuleException.class, failed.getCause());
        assertEquals(1, this.rules.violations().size());
    }

    @Test
    void consoleWorkBelongsOnTheGlobalThread() throws Exception {
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> onPlayer(this.steve, () -> this.platform.dispatchConsole("say hi")));
        assertInstanceOf(ThreadRuleException.class, failed.getCause());
        assertThrows(ThreadRuleException.class, () -> this.platform.broadcast(Component.text("x")));
        assertEquals(2, onGlobal(() -> this.platform.broadcast(Component.text("to all"))));
        assertEquals(List.of("Ran: say hi"), onGlobal(() -> this.platform.dispatchConsole("say hi")).feedback());
        assertEquals(2, this.rules.violations().size());
    }

    @Test
    void globalThreadMayNotTouchAPlayer() {
        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> onGlobal(() -> this.platform.inventory(this.steve.uuid())));
        assertInstanceOf(ThreadRuleException.class, failed.getCause());
    }

    @Test
    void workForAPlayerWhoLeftRunsTheGoneCallback() throws Exception {
        CountDownLatch blocker = new CountDownLatch(1);
        CompletableFuture<String> queued = new CompletableFuture<>();
        // Hold Steve's thread so the next task is queued, then make him leave.
        this.platform.runForPlayer(this.steve.uuid(), () -> awaitQuietly(blocker), () -> { });
        this.platform.runForPlayer(this.steve.uuid(), () -> queued.complete("ran"), () -> queued.complete("gone"));
        this.platform.remove("Steve");
        blocker.countDown();
        assertEquals("gone", queued.get(10, TimeUnit.SECONDS));
        CompletableFuture<String> later = new CompletableFuture<>();
        this.platform.runForPlayer(this.steve.uuid(), () -> later.complete("ran"), () -> later.complete("gone"));
        assertEquals("gone", later.get(10, TimeUnit.SECONDS));
    }

    @Test
    void unknownCommandIsRejectedWithFeedback() throws Exception {
        var result = onGlobal(() -> this.platform.dispatchConsole("frobnicate now"));
        assertEquals(false, result.dispatched());
        assertEquals(List.of("Unknown or incomplete command: frobnicate"), result.feedback());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException exc) {
            Thread.currentThread().interrupt();
        }
    }
}
