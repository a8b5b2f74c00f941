package dev.mineclaw.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakeLink;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A wake the bridge took and had not ended when the link dropped is sent again, once, to the
 * bridge linked next (with {@code resent} and the same id), or its asker is told it was not
 * delivered; a question the bridge ended is never sent again.
 */
class KeptAsksTest {
    private static final List<String> GRANTED = List.of("mineclaw.command.chat");
    private static final Duration MAX_AGE = Duration.ofSeconds(60);
    private static final String NOT_DELIVERED = "Your question was not delivered";

    private final FakeLink link = new FakeLink();
    private final FakePlatform platform = new FakePlatform();
    private final TextRenderer renderer = new TextRenderer();
    private final AtomicLong now = new AtomicLong();
    private final KeptAsks asks = new KeptAsks(this.link, this.platform, Messages.defaults(this.renderer),
            this.renderer, MAX_AGE, Duration.ofSeconds(10), this.now::get);
    private final ChatService chat = new ChatService(this.link, Messages.defaults(this.renderer), this.renderer, "@ai",
            Duration.ofSeconds(5), Logger.getLogger("test"));
    private final PlayerRef steve = this.platform.join("Steve");

    KeptAsksTest() {
        this.chat.keep(this.asks);
    }

    @AfterEach
    void shutdown() {
        this.platform.shutdown();
    }

    private static CompletableFuture<JsonObject> verdict(String decision) {
        JsonObject answer = new JsonObject();
        answer.addProperty("decision", decision);
        answer.addProperty("ai_prefix", false);
        answer.add("notice", JsonNull.INSTANCE);
        return CompletableFuture.completedFuture(answer);
    }

    /** A wake sent to a bridge that takes ids and accepted by it; returns its id. */
    private String acceptedWake(String text) throws Exception {
        return acceptedWake(this.asks, text);
    }

    private String acceptedWake(KeptAsks asks, String text) throws Exception {
        asks.linkUp();
        asks.linkState(true);
        this.link.answer(request -> verdict("accept"));
        int before = this.link.sent().size();
        this.chat.decide(this.steve, GRANTED, text).get(10, TimeUnit.SECONDS);
        JsonObject sent = this.link.sent().get(before).data();
        assertNotNull(sent.get("ask"), "a wake to a bridge taking ids carries one");
        return sent.get("ask").getAsString();
    }

    private void relink(boolean takesIds) {
        relink(this.asks, takesIds);
    }

    private void relink(KeptAsks asks, boolean takesIds) {
        this.link.setUp(false);
        asks.linkDown();
        this.link.setUp(true);
        asks.linkUp();
        asks.linkState(takesIds);
    }

    private List<String> shown() throws Exception {
        // The lines go through the platform's executor: wait for it to drain.
        CompletableFuture<Void> drained = new CompletableFuture<>();
        this.platform.runGlobal(() -> drained.complete(null));
        drained.get(10, TimeUnit.SECONDS);
        return this.platform.shown().stream().map(FakePlatform.Shown::text).toList();
    }

    @Test
    void aWakeStillOpenWhenTheLinkDroppedIsSentAgainOnceWithItsId() throws Exception {
        String id = acceptedWake("@ai where is the village?");
        this.link.answer(request -> verdict("accept"));
        relink(true);
        FakeLink.Sent again = this.link.sent().get(this.link.sent().size() - 1);
        assertEquals("chat", again.type());
        assertEquals(id, again.data().get("ask").getAsString());
        assertTrue(again.data().get("resent").getAsBoolean());
        assertEquals("@ai where is the village?", again.data().get("text").getAsString());
        assertEquals(1, this.asks.size(), "kept until the bridge ends it");
        // The link drops again: never sent a second time. Not told yet either: the bridge it
        // links to may be the one still answering it (seen in the soak: answered and told).
        int sent = this.link.sent().size();
        relink(true);
        assertEquals(sent, this.link.sent().size(), "never sent a second time");
        this.asks.sweep();
        assertTrue(shown().isEmpty());
        // Nothing came by the bounded age: now its asker is told.
        this.now.addAndGet(MAX_AGE.toNanos() + 1);
        this.asks.sweep();
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertEquals(0, this.asks.size());
    }

    @Test
    void aWakeOrphanedLateIsToldAtItsOwnAgeNotAWholeAgeAfterTheDrop() throws Exception {
        // Seen in the storm soak: a wake sent again 50 s after it was asked, its link dropping
        // 5 s later, was told a whole bounded age after that drop, when its asker had given up.
        acceptedWake("@ai late orphan");
        this.link.answer(request -> verdict("accept"));
        this.now.addAndGet(Duration.ofSeconds(50).toNanos());
        relink(true); // sent again to the next bridge, which takes it
        this.now.addAndGet(Duration.ofSeconds(5).toNanos());
        this.link.setUp(false);
        this.asks.linkDown();
        assertEquals(Duration.ofSeconds(5).toNanos(), this.asks.sweep(), "the next sweep is due at its age");
        this.now.addAndGet(Duration.ofSeconds(5).toNanos() + 1);
        assertEquals(-1, this.asks.sweep(), "nothing left to sweep");
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertEquals(0, this.asks.size());
    }

    @Test
    void aStormOfLinkEventsPlansOneSweepNotOneChainEach() throws Exception {
        // Each drop and relink used to start its own chain of sweeps, each planning the next for
        // as long as an orphaned question was left: a flapping link multiplied them.
        acceptedWake("@ai kept through a storm");
        this.link.answer(request -> verdict("accept"));
        for (int i = 0; i < 20; i++) {
            relink(true);
        }
        assertEquals(1, this.asks.size(), "still kept: sent again once, then orphaned");
        assertEquals(1, this.asks.plansMade(), "one sweep planned, for the question's own age");
    }

    @Test
    void thePlannedSweepTellsAnOrphanAtItsAgeOnTheRealClock() throws Exception {
        // Nothing calls sweep() here: the one planned sweep, after a storm of link events, does.
        KeptAsks timed = new KeptAsks(this.link, this.platform, Messages.defaults(this.renderer), this.renderer,
                Duration.ofMillis(300), Duration.ofSeconds(10), System::nanoTime);
        this.chat.keep(timed);
        acceptedWake(timed, "@ai on the real clock");
        this.link.answer(request -> verdict("accept"));
        for (int i = 0; i < 5; i++) {
            relink(timed, true);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED))) {
            assertTrue(System.nanoTime() < deadline, "the planned sweep never told the asker");
            Thread.sleep(20);
        }
        assertEquals(0, timed.size());
        assertEquals(1, shown().stream().filter(line -> line.contains(NOT_DELIVERED)).count(), "told once");
    }

    @Test
    void aWakeSentAgainAndAnsweredAfterAnotherDropIsNotTold() throws Exception {
        String id = acceptedWake("@ai slow one");
        this.link.answer(request -> verdict("accept"));
        relink(true);
        relink(true); // the same bridge, still running it, links again
        this.asks.forget(id); // and its answer comes
        this.now.addAndGet(MAX_AGE.toNanos() + 1);
        this.asks.sweep();
        assertTrue(shown().isEmpty());
    }

    @Test
    void aWakeTheBridgeEndedIsNeverSentAgain() throws Exception {
        String id = acceptedWake("@ai hi");
        this.asks.forget(id); // its answer line carried the id (or ask.done came)
        int sent = this.link.sent().size();
        relink(true);
        assertEquals(sent, this.link.sent().size());
        assertTrue(shown().isEmpty(), "nobody is told anything");
    }

    @Test
    void anEndBeforeTheVerdictIsProcessedIsNotUndone() throws Exception {
        this.asks.linkUp();
        this.asks.linkState(true);
        this.link.answer(request -> {
            // The answer line overtakes the verdict on its way through the plugin.
            this.asks.forget(request.data().get("ask").getAsString());
            return verdict("accept");
        });
        this.chat.decide(this.steve, GRANTED, "@ai quick").get(10, TimeUnit.SECONDS);
        assertEquals(0, this.asks.size());
    }

    @Test
    void aRefusedOrUnansweredWakeIsNotKept() throws Exception {
        this.asks.linkUp();
        this.asks.linkState(true);
        this.link.answer(request -> verdict("refuse"));
        this.chat.decide(this.steve, GRANTED, "@ai refused").get(10, TimeUnit.SECONDS);
        this.link.answer(request -> CompletableFuture.failedFuture(
                dev.mineclaw.core.link.LinkException.disconnected("gone")));
        this.chat.decide(this.steve, GRANTED, "@ai lost before its verdict").get(10, TimeUnit.SECONDS);
        assertEquals(0, this.asks.size(), "the plugin told the asker itself (offline line)");
    }

    @Test
    void aWakeOlderThanTheBoundIsToldNotSent() throws Exception {
        acceptedWake("@ai old question");
        this.now.addAndGet(MAX_AGE.toNanos() + 1);
        int sent = this.link.sent().size();
        relink(true);
        assertEquals(sent, this.link.sent().size());
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
    }

    @Test
    void aBridgeThatTakesNoIdsMeansTheAskerIsTold() throws Exception {
        acceptedWake("@ai hello");
        relink(false);
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertEquals(0, this.asks.size());
    }

    @Test
    void aResentWakeTheBridgeNoLongerTakesIsTold() throws Exception {
        acceptedWake("@ai hello");
        this.link.answer(request -> verdict("pass"));
        relink(true);
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertEquals(0, this.asks.size());
    }

    @Test
    void aLinkThatStaysDownPastTheBoundTellsTheAsker() throws Exception {
        acceptedWake("@ai hello");
        this.link.setUp(false);
        this.asks.linkDown();
        this.asks.sweep();
        assertTrue(shown().isEmpty(), "not before the bounded age");
        this.now.addAndGet(MAX_AGE.toNanos() + 1);
        this.asks.sweep();
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertEquals(0, this.asks.size());
    }

    @Test
    void noIdBeforeTheBridgeSaysItTakesThem() throws Exception {
        this.link.answer(request -> verdict("accept"));
        this.chat.decide(this.steve, GRANTED, "@ai hi").get(10, TimeUnit.SECONDS);
        assertNull(this.link.sent().get(0).data().get("ask"), "an older bridge refuses unknown fields");
        assertFalse(this.asks.size() > 0);
    }

    @Test
    void aWakeAskedBeforeTheNewLinksStateWaitsForItAndGoesWithAnId() throws Exception {
        // Seen in the storm soak: a wake asked between a relink and the bridge's link.state went
        // without an id, so unkept; its bridge lost the server and nobody told its asker.
        this.asks.linkUp();
        this.asks.linkState(true);
        this.link.setUp(false);
        this.asks.linkDown();
        this.link.setUp(true);
        this.asks.linkUp(); // linked; its link.state not here yet
        this.link.answer(request -> verdict("accept"));
        CompletableFuture<ChatOutcome> outcome = this.chat.decide(this.steve, GRANTED, "@ai hi");
        assertFalse(outcome.isDone());
        assertTrue(this.link.sent().isEmpty(), "nothing sent before the bridge said whether it takes ids");
        this.asks.linkState(true);
        outcome.get(10, TimeUnit.SECONDS);
        assertNotNull(this.link.sent().get(0).data().get("ask"));
        assertEquals(1, this.asks.size());
    }

    @Test
    void aLinkStateThatNeverComesHoldsAWakeOnlyABoundedTime() throws Exception {
        this.asks.linkUp(); // an older bridge may say nothing of ids: the wake goes without one
        this.link.answer(request -> verdict("accept"));
        this.chat.decide(this.steve, GRANTED, "@ai hi").get(10, TimeUnit.SECONDS);
        assertNull(this.link.sent().get(0).data().get("ask"));
        assertFalse(this.asks.stateKnown().isDone(), "a caller's bound does not settle it for others");
    }

    @Test
    void aWakeWhoseVerdictCameTooLateIsNeverAnsweredAfterItsAskerWasTold() throws Exception {
        // Under load the bridge starts the turn before the plugin's chat.expired reaches it
        // (seen in the soak: told "not sent", then answered). The plugin decided: its lines
        // for that question are not shown.
        this.asks.linkUp();
        this.asks.linkState(true);
        this.link.answer(request -> CompletableFuture.failedFuture(new RuntimeException("no verdict in time")));
        int before = this.link.sent().size();
        ChatOutcome outcome = this.chat.decide(this.steve, GRANTED, "@ai late one").get(10, TimeUnit.SECONDS);
        assertEquals(ChatOutcome.Reason.NO_VERDICT, outcome.reason());
        String id = this.link.sent().get(before).data().get("ask").getAsString();
        assertEquals(0, this.asks.size());
        assertFalse(this.asks.answered(id), "the late answer is not shown");
        assertTrue(this.asks.answered("another"), "a question nobody was told about is");
    }

    @Test
    void aQuestionToldNotDeliveredIsNeverAnsweredAfterwards() throws Exception {
        String id = acceptedWake("@ai slow one");
        this.link.answer(request -> verdict("accept"));
        relink(true);
        relink(true);
        this.now.addAndGet(MAX_AGE.toNanos() + 1);
        this.asks.sweep();
        assertTrue(shown().stream().anyMatch(line -> line.contains(NOT_DELIVERED)));
        assertFalse(this.asks.answered(id), "told it was not delivered: its answer is not shown");
    }
}
