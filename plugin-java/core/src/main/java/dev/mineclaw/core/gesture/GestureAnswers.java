package dev.mineclaw.core.gesture;

import dev.mineclaw.core.platform.PlayerRef;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The yes/no questions a player may approve by a gesture, and the gestures themselves.
 *
 * <p>The bridge marks a prompt {@code "gesture": true} in {@code approval.show}; once it is
 * shown, the asked player's first gesture (and only theirs) approves it: the {@link Answerer}
 * sends {@code /mineclaw approve <token> gesture} as that player, which the bridge checks like
 * any click. A gesture with no question pending, after the question expired, or from anyone
 * else does nothing. One question per player is remembered (a newer prompt replaces it); a
 * click on the prompt, a quit, or the gesture itself forgets it.
 *
 * <p>Thread-safe: adapters call it from whichever thread fires the event, and a call for a
 * player without a pending question is one map lookup.
 */
public final class GestureAnswers {
    /** The feature a plugin detecting gestures announces in {@code hello}. */
    public static final String FEATURE = "gestures";
    /** At or above this pitch (straight up is -90) a look counts. */
    public static final float LOOK_UP_PITCH = -80f;
    /** Below this pitch the look gesture is armed again: a player already looking up when asked must look away first. */
    public static final float REARM_PITCH = -60f;
    /** The most of a question's time that is cut off its end for gestures (see {@link #expect}). */
    public static final Duration MARGIN = Duration.ofSeconds(2);
    /** The option of the approve command a gesture sends. */
    public static final String OPTION = "gesture";

    /** Sends the approval for the player; must not block. */
    @FunctionalInterface
    public interface Answerer {
        void approve(PlayerRef player, String token, Gesture gesture);
    }

    private record Pending(String token, long deadline, boolean lookArmed) {
    }

    private final ConcurrentHashMap<UUID, Pending> pending = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;
    private final Answerer answerer;

    public GestureAnswers(LongSupplier nanoTime, Answerer answerer) {
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.answerer = Objects.requireNonNull(answerer, "answerer");
    }

    /**
     * A question was shown to {@code player}; their gesture may approve it until shortly before
     * it expires. The bridge's deadline started before the prompt crossed the link, and a gesture
     * must reach it in time, so the last tenth of the time (at most {@link #MARGIN}) is left out:
     * a late gesture is simply not sent.
     */
    public void expect(UUID player, String token, Duration expires) {
        Duration margin = expires.dividedBy(10);
        if (margin.compareTo(MARGIN) > 0) {
            margin = MARGIN;
        }
        long deadline = this.nanoTime.getAsLong() + expires.minus(margin).toNanos();
        this.pending.put(player, new Pending(Objects.requireNonNull(token, "token"), deadline, false));
    }

    /** Whether a gesture of {@code player} would answer something now (a cheap check for hot events). */
    public boolean expecting(UUID player) {
        Pending question = this.pending.get(player);
        return question != null && live(player, question);
    }

    /** The player answered {@code token} by other means (a click): their gesture no longer counts. */
    public void answered(UUID player, String token) {
        this.pending.computeIfPresent(player, (key, question) -> question.token().equals(token) ? null : question);
    }

    /** The player left: nothing of theirs is pending any more. */
    public void forget(UUID player) {
        this.pending.remove(player);
    }

    /** A sneak toggle; starting to sneak is the gesture. Returns whether it answered a question. */
    public boolean sneak(PlayerRef player, boolean sneaking) {
        return sneaking && fire(player, Gesture.SNEAK);
    }

    /** The player's view pitch changed (degrees, -90 up to 90 down). Returns whether it answered. */
    public boolean look(PlayerRef player, float pitch) {
        Pending question = this.pending.get(player.uuid());
        if (question == null || !live(player.uuid(), question)) {
            return false;
        }
        if (pitch > REARM_PITCH) {
            if (!question.lookArmed()) {
                this.pending.replace(player.uuid(), question, new Pending(question.token(), question.deadline(), true));
            }
            return false;
        }
        return pitch <= LOOK_UP_PITCH && question.lookArmed() && fire(player, Gesture.LOOK_UP);
    }

    /**
     * The player right-clicked air holding {@code material} in the main hand. Returns whether it
     * answered a question (never for an item that acts on its own, see {@link InertItems}).
     */
    public boolean useItemInAir(PlayerRef player, String material, boolean edible) {
        return InertItems.isInert(material, edible) && fire(player, Gesture.USE_ITEM);
    }

    private boolean fire(PlayerRef player, Gesture gesture) {
        Pending question = this.pending.get(player.uuid());
        if (question == null || !live(player.uuid(), question)) {
            return false;
        }
        // Removed before answering: two gestures at once send one answer.
        if (!this.pending.remove(player.uuid(), question)) {
            return false;
        }
        this.answerer.approve(player, question.token(), gesture);
        return true;
    }

    private boolean live(UUID player, Pending question) {
        if (this.nanoTime.getAsLong() - question.deadline() < 0) {
            return true;
        }
        this.pending.remove(player, question);
        return false;
    }
}
