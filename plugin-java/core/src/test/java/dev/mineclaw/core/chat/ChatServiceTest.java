package dev.mineclaw.core.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkException;
import dev.mineclaw.core.link.LinkState;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakeLink;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class ChatServiceTest {
    private static final PlayerRef STEVE = new PlayerRef(UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"), "Steve");
    private static final List<String> GRANTED = List.of("mineclaw.command.chat");
    // Short, so the no-verdict cases finish quickly; nothing below asserts on time.
    private static final Duration VERDICT_TIMEOUT = Duration.ofMillis(50);

    private final FakeLink link = new FakeLink();
    private final TextRenderer renderer = new TextRenderer();
    private final ChatService chat = new ChatService(this.link, Messages.defaults(this.renderer), this.renderer, "@ai",
            VERDICT_TIMEOUT, Logger.getLogger("test"));

    private ChatOutcome decide(String text) throws Exception {
        return this.chat.decide(STEVE, GRANTED, text).get(10, TimeUnit.SECONDS);
    }

    private static CompletableFuture<JsonObject> verdict(String decision, boolean aiPrefix, String notice) {
        JsonObject answer = new JsonObject();
        answer.addProperty("decision", decision);
        answer.addProperty("ai_prefix", aiPrefix);
        if (notice == null) {
            answer.add("notice", JsonNull.INSTANCE);
        } else {
            JsonObject text = new JsonObject();
            text.addProperty("template", notice);
            answer.add("notice", text);
        }
        return CompletableFuture.completedFuture(answer);
    }

    @Test
    void ordinaryMessageInPrefixedModeMakesNoRoundTrip() throws Exception {
        ChatOutcome outcome = decide("hello all");
        assertTrue(outcome.shownPublicly());
        assertEquals(ChatOutcome.Reason.NOT_FORWARDED, outcome.reason());
        assertTrue(this.link.sent().isEmpty());
    }

    @Test
    void prefixedMessageIsSentWithPlayerFactsAndTheVerdictTimeout() throws Exception {
        this.link.answer(request -> verdict("accept", false, null));
        ChatOutcome outcome = decide("@ai hi");
        assertTrue(outcome.shownPublicly());
        assertFalse(outcome.aiPrefix());
        assertEquals(ChatOutcome.Reason.ACCEPTED, outcome.reason());
        FakeLink.Sent sent = this.link.sent().get(0);
        assertEquals("chat", sent.type());
        assertEquals("@ai hi", sent.data().get("text").getAsString());
        assertEquals("Steve", sent.data().getAsJsonObject("player").get("name").getAsString());
        assertEquals("mineclaw.command.chat", sent.data().getAsJsonArray("granted").get(0).getAsString());
        assertEquals(VERDICT_TIMEOUT, sent.timeout());
    }

    @Test
    void listenModeForwardsEverythingAndAcceptCarriesTheAiPrefix() throws Exception {
        this.chat.linkState(new LinkState(true, "@ai"));
        this.link.answer(request -> verdict("accept", true, null));
        ChatOutcome outcome = decide("what time is it");
        assertTrue(outcome.shownPublicly());
        assertTrue(outcome.aiPrefix());
        assertEquals(1, this.link.sent().size());
    }

    @Test
    void refuseCancelsAndCarriesThePrivateNotice() throws Exception {
        this.link.answer(request -> verdict("refuse", false, "<red>wait <b>5s</b>"));
        ChatOutcome outcome = decide("@ai again");
        assertFalse(outcome.shownPublicly());
        assertEquals(ChatOutcome.Reason.REFUSED, outcome.reason());
        assertEquals("wait 5s", TextRenderer.plain(outcome.notice()));
    }

    @Test
    void passLeavesTheMessageUntouched() throws Exception {
        this.chat.linkState(new LinkState(true, "@ai"));
        this.link.answer(request -> verdict("pass", false, null));
        ChatOutcome outcome = decide("just chatting");
        assertTrue(outcome.shownPublicly());
        assertFalse(outcome.aiPrefix());
        assertNull(outcome.notice());
        assertEquals(ChatOutcome.Reason.PASSED, outcome.reason());
    }

    @Test
    void noVerdictInTimeLetsAnOrdinaryMessagePass() throws Exception {
        this.chat.linkState(new LinkState(true, "@ai"));
        ChatOutcome outcome = decide("nobody answers this");
        assertTrue(outcome.shownPublicly());
        assertNull(outcome.notice());
        assertEquals(ChatOutcome.Reason.NO_VERDICT, outcome.reason());
    }

    @Test
    void noVerdictInTimeCancelsAPrefixedMessageWithTheOfflineLine() throws Exception {
        CompletableFuture<JsonObject> late = new CompletableFuture<>();
        this.link.answer(request -> late);
        ChatOutcome outcome = decide("@ai are you there");
        assertFalse(outcome.shownPublicly());
        assertTrue(TextRenderer.plain(outcome.notice()).contains("offline"));
        // The verdict arriving afterwards changes nothing.
        late.complete(verdict("accept", true, null).join());
        assertEquals(ChatOutcome.Reason.NO_VERDICT, outcome.reason());
    }

    @Test
    void linkDownCountsListenModeAsOffAndAnswersWakesItself() throws Exception {
        this.chat.linkState(new LinkState(true, "@ai"));
        this.link.setUp(false);
        ChatOutcome ordinary = decide("hello");
        assertTrue(ordinary.shownPublicly());
        ChatOutcome wake = decide("@ai hello");
        assertFalse(wake.shownPublicly());
        assertTrue(TextRenderer.plain(wake.notice()).contains("offline"));
        assertTrue(this.link.sent().isEmpty());
    }

    @Test
    void failedRequestIsTreatedAsNoVerdict() throws Exception {
        this.link.answer(request -> CompletableFuture.failedFuture(LinkException.disconnected("dropped")));
        ChatOutcome outcome = decide("@ai hi");
        assertFalse(outcome.shownPublicly());
        assertEquals(ChatOutcome.Reason.NO_VERDICT, outcome.reason());
    }

    @Test
    void theBridgeChoosesThePrefix() throws Exception {
        this.chat.linkState(new LinkState(false, "!bot"));
        this.link.setUp(false);
        assertTrue(decide("@ai hi").shownPublicly());
        assertFalse(decide("!bot hi").shownPublicly());
        assertEquals("!bot", this.chat.publicPrefix());
    }

    @Test
    void oversizedMessageIsNotForwarded() throws Exception {
        this.chat.linkState(new LinkState(true, "@ai"));
        ChatOutcome outcome = decide("x".repeat(5000));
        assertTrue(outcome.shownPublicly());
        assertTrue(this.link.sent().isEmpty());
    }
}
