package dev.mineclaw.core.gesture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mineclaw.core.platform.PlayerRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GestureAnswersTest {
    private static final PlayerRef STEVE = new PlayerRef(UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"), "Steve");
    private static final PlayerRef ALEX = new PlayerRef(UUID.fromString("0b6f7c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b"), "Alex");
    private static final String TOKEN = "q3x7Yh2L0vT9sKd8Wm4nPa";
    private static final Duration MINUTE = Duration.ofSeconds(60);

    private final AtomicLong now = new AtomicLong(1_000_000L);
    private final List<String> sent = new ArrayList<>();
    private final GestureAnswers gestures = new GestureAnswers(this.now::get,
            (player, token, gesture) -> this.sent.add(player.name() + " " + token + " " + gesture));

    @Test
    void aGestureWithNoQuestionPendingDoesNothing() {
        assertFalse(this.gestures.sneak(STEVE, true));
        assertFalse(this.gestures.look(STEVE, -90f));
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:stick", false));
        assertFalse(this.gestures.expecting(STEVE.uuid()));
        assertEquals(List.of(), this.sent);
    }

    @Test
    void sneakingApprovesOnceAndOnlyForTheAskedPlayer() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        assertFalse(this.gestures.sneak(ALEX, true)); // someone else's gesture
        assertFalse(this.gestures.sneak(STEVE, false)); // standing up is not the gesture
        assertTrue(this.gestures.sneak(STEVE, true));
        assertFalse(this.gestures.sneak(STEVE, true)); // used: a second one sends nothing
        assertEquals(List.of("Steve " + TOKEN + " SNEAK"), this.sent);
    }

    @Test
    void lookingUpCountsOnlyAfterLookingElsewhereSinceTheQuestion() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        assertFalse(this.gestures.look(STEVE, -90f)); // already looking up when asked
        assertFalse(this.gestures.look(STEVE, -70f)); // not far enough either way
        assertFalse(this.gestures.look(STEVE, -90f));
        assertFalse(this.gestures.look(STEVE, 10f)); // looked ahead: armed
        assertFalse(this.gestures.look(STEVE, -79f)); // not straight up yet
        assertTrue(this.gestures.look(STEVE, -85f));
        assertEquals(List.of("Steve " + TOKEN + " LOOK_UP"), this.sent);
    }

    @Test
    void rightClickingAirCountsOnlyWithAnInertItem() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:bread", true)); // eaten
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:ender_pearl", false)); // thrown
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:diamond_helmet", false)); // worn
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:cow_spawn_egg", false));
        assertFalse(this.gestures.useItemInAir(STEVE, "minecraft:water_bucket", false));
        assertFalse(this.gestures.useItemInAir(STEVE, "somemod:wand", false)); // unknown use
        assertTrue(this.gestures.useItemInAir(STEVE, "minecraft:stick", false));
        assertEquals(List.of("Steve " + TOKEN + " USE_ITEM"), this.sent);
    }

    @Test
    void aQuestionStopsTakingGesturesShortlyBeforeItExpires() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        this.now.addAndGet(MINUTE.minus(GestureAnswers.MARGIN).toNanos() - 1);
        assertTrue(this.gestures.expecting(STEVE.uuid()));
        this.now.addAndGet(1);
        assertFalse(this.gestures.expecting(STEVE.uuid())); // 2 s before the bridge's deadline
        this.gestures.expect(STEVE.uuid(), TOKEN, Duration.ofMillis(1000));
        this.now.addAndGet(Duration.ofMillis(899).toNanos());
        assertTrue(this.gestures.expecting(STEVE.uuid()));
        this.now.addAndGet(Duration.ofMillis(1).toNanos());
        assertFalse(this.gestures.sneak(STEVE, true)); // a tenth of a short question
        assertEquals(List.of(), this.sent);
    }

    @Test
    void anExpiredQuestionIsForgottenAndAClickOrAQuitForgetsIt() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        this.now.addAndGet(MINUTE.toNanos());
        assertFalse(this.gestures.expecting(STEVE.uuid()));
        assertFalse(this.gestures.sneak(STEVE, true));

        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        this.gestures.answered(STEVE.uuid(), "another-token-of-22chars");
        assertTrue(this.gestures.expecting(STEVE.uuid())); // a click on another prompt
        this.gestures.answered(STEVE.uuid(), TOKEN);
        assertFalse(this.gestures.sneak(STEVE, true));

        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        this.gestures.forget(STEVE.uuid());
        assertFalse(this.gestures.sneak(STEVE, true));
        assertEquals(List.of(), this.sent);
    }

    @Test
    void aNewerQuestionReplacesTheOlderOne() {
        this.gestures.expect(STEVE.uuid(), TOKEN, MINUTE);
        String newer = "Zz9yYx8wWv7uUt6sSr5qQp";
        this.gestures.expect(STEVE.uuid(), newer, MINUTE);
        assertTrue(this.gestures.sneak(STEVE, true));
        assertEquals(List.of("Steve " + newer + " SNEAK"), this.sent);
    }

    @Test
    void inertItems() {
        assertTrue(InertItems.isInert("minecraft:stick", false));
        assertTrue(InertItems.isInert("STONE", false));
        assertTrue(InertItems.isInert("minecraft:diamond_sword", false));
        assertFalse(InertItems.isInert("minecraft:air", false));
        assertFalse(InertItems.isInert("minecraft:potion", false));
        assertFalse(InertItems.isInert("minecraft:splash_potion", false));
        assertFalse(InertItems.isInert("minecraft:goat_horn", false));
        assertFalse(InertItems.isInert("minecraft:bow", false));
        assertFalse(InertItems.isInert("", false));
        assertFalse(InertItems.isInert(null, false));
    }
}
