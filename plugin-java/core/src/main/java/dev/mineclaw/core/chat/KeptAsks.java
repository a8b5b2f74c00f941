package dev.mineclaw.core.chat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.BridgeLink;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.text.Messages;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import net.kyori.adventure.text.Component;

/**
 * Questions the plugin keeps until the bridge ends them (protocol 1.5, feature {@code asks}).
 *
 * <p>Each wake (a prefixed chat line, an {@code /ai} question) sent to a bridge that takes ids
 * carries an id of its own. The bridge ends a question with an {@code output.chat} carrying the
 * id (its answer, or the line telling its asker why not) or the event {@code ask.done}; a
 * question it did not take (a refusal, a subcommand) it ends at once. A question the bridge took
 * and had not ended when the link dropped is sent again, once, with {@code resent}, when the link
 * is next up, if it is not older than the bounded age; otherwise its asker is told it was not
 * delivered (a question sent again once already is told only at the bounded age, if no answer
 * came by then: the bridge linked now may be the one still answering it). So a bridge killed or hung while a question is in flight loses no question without a
 * word, and the bridge's own book keeps a question sent again from being answered twice.
 *
 * <p>Thread-safe: called from chat threads, command threads and the link's threads.
 */
public final class KeptAsks {
    /** The feature announcing that the plugin gives its questions ids. */
    public static final String FEATURE = "asks";
    /** The most questions kept at once (the oldest are told and dropped past it). */
    static final int MAX_KEPT = 1024;
    /** Questions whose askers were told they were not sent or not delivered (at most MAX_KEPT). */
    private final Set<String> told = new LinkedHashSet<>();
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What a question travelled as. */
    public enum Kind {
        CHAT("chat"),
        COMMAND("command");

        private final String type;

        Kind(String type) {
            this.type = type;
        }
    }

    private static final class Kept {
        final String id;
        final UUID player;
        final Kind kind;
        final JsonObject data;
        final long sentAt;
        boolean accepted;
        boolean resent;
        /** A link it was taken on dropped, and no bridge took it since. */
        boolean orphaned;

        Kept(String id, UUID player, Kind kind, JsonObject data, long sentAt) {
            this.id = id;
            this.player = player;
            this.kind = kind;
            this.data = data;
            this.sentAt = sentAt;
        }
    }

    private final BridgeLink link;
    private final Platform platform;
    private final Messages messages;
    private final TextRenderer renderer;
    private final Duration maxAge;
    private final Duration requestTimeout;
    private final LongSupplier nanos;
    private final Map<String, Kept> kept = new LinkedHashMap<>();
    private boolean bridgeTakesIds;
    private boolean relinked;
    /** The longest a question waits for a new link's {@code link.state} before it goes without an id. */
    public static final Duration STATE_WAIT = Duration.ofMillis(100);
    /** Done once the link now up said whether its bridge takes ids (or dropped). */
    private CompletableFuture<Void> stateKnown = CompletableFuture.completedFuture(null);
    private volatile BiConsumer<String, String> trail = (id, what) -> { };
    /** Whether a sweep is planned, and when ({@code nanos}): one plan at a time. */
    private boolean sweepPlanned;
    private long plannedFor;
    private int plansMade;

    /**
     * @param maxAge a question older than this when the link is back is not sent again; its asker
     *     is told (also when the link stays down that long)
     * @param requestTimeout how long a question sent again waits for its answer
     */
    public KeptAsks(BridgeLink link, Platform platform, Messages messages, TextRenderer renderer, Duration maxAge,
            Duration requestTimeout, LongSupplier nanos) {
        this.link = link;
        this.platform = platform;
        this.messages = messages;
        this.renderer = renderer;
        this.maxAge = maxAge;
        this.requestTimeout = requestTimeout;
        this.nanos = nanos;
    }

    /**
     * Told what becomes of each question ({@code id}, then what: {@code open <question>},
     * {@code accepted}, {@code resent}, {@code ended}, {@code answered}, {@code told}...): a
     * test server prints it, so a question lost in a soak names the step that lost it.
     */
    public void trail(BiConsumer<String, String> trail) {
        this.trail = trail;
    }

    /**
     * Gives the question in {@code data} an id and keeps it until it is {@link #accepted} or
     * forgotten; returns the id, or null (nothing added) when the bridge linked now does not take
     * ids.
     */
    public String open(UUID player, Kind kind, JsonObject data) {
        List<Kept> overflow = new ArrayList<>();
        String id;
        synchronized (this) {
            if (!this.bridgeTakesIds || !this.link.isUp()) {
                return null;
            }
            byte[] raw = new byte[16];
            RANDOM.nextBytes(raw);
            id = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
            data.addProperty("ask", id);
            this.kept.put(id, new Kept(id, player, kind, data.deepCopy(), this.nanos.getAsLong()));
            while (this.kept.size() > MAX_KEPT) {
                String oldest = this.kept.keySet().iterator().next();
                Kept dropped = this.kept.remove(oldest);
                if (dropped.accepted) {
                    overflow.add(dropped);
                }
            }
        }
        JsonElement question = data.has("text") ? data.get("text") : data.get("args");
        this.trail.accept(id, "open " + question);
        overflow.forEach(this::tell);
        return id;
    }

    /** The bridge took the question (an accepted wake, an answered {@code /ai}): kept until it ends. */
    public synchronized void accepted(String id) {
        Kept entry = this.kept.get(id);
        if (entry != null) {
            entry.accepted = true;
        }
        this.trail.accept(id, entry != null ? "accepted" : "accepted, not kept");
    }

    /** The question ended, or never reached the bridge (the plugin told its asker itself). */
    public void forget(String id) {
        boolean kept;
        synchronized (this) {
            kept = this.kept.remove(id) != null;
        }
        this.trail.accept(id, kept ? "ended" : "ended, not kept");
    }

    /**
     * The asker was told here that the question was not sent (no verdict in time, a failed
     * request): forgotten, and a line a bridge still sends for it is not shown, so the asker is
     * never both told and answered (under load the bridge may have started its turn before the
     * plugin's {@code chat.expired} reached it).
     */
    public void toldNotSent(String id) {
        synchronized (this) {
            this.kept.remove(id);
            markTold(id);
        }
        this.trail.accept(id, "told not sent");
    }

    /**
     * An {@code output.chat} line names the question: it ended. Whether the line may be shown
     * (false: its asker was told the question was not sent or not delivered).
     */
    public boolean answered(String id) {
        boolean shown;
        synchronized (this) {
            this.kept.remove(id);
            shown = !this.told.contains(id);
        }
        this.trail.accept(id, shown ? "answered" : "answered, not shown (told)");
        return shown;
    }

    private void markTold(String id) {
        this.told.add(id);
        while (this.told.size() > MAX_KEPT) {
            this.told.remove(this.told.iterator().next());
        }
    }

    /** The player left: nobody to answer or tell. */
    public synchronized void playerQuit(UUID player) {
        this.kept.values().removeIf(entry -> entry.player.equals(player));
    }

    /** How many questions are kept now (tests, status). */
    public synchronized int size() {
        return this.kept.size();
    }

    /** A new link is up: the next {@code link.state} decides what happens to the kept questions. */
    public synchronized void linkUp() {
        this.relinked = true;
        if (this.stateKnown.isDone()) {
            this.stateKnown = new CompletableFuture<>();
        }
    }

    /**
     * Done once the bridge of the link now up said whether it takes ids ({@code link.state},
     * right after the handshake), or the link dropped. A question asked in between would go
     * without an id, and so unkept: its sender waits for this, a bounded time ({@link #STATE_WAIT}).
     * Shared: a caller bounding its wait does so on a copy.
     */
    public synchronized CompletableFuture<Void> stateKnown() {
        return this.stateKnown;
    }

    private void stateSettled() {
        CompletableFuture<Void> known;
        synchronized (this) {
            known = this.stateKnown;
        }
        known.complete(null); // outside the lock: a waiting question goes on from here
    }

    /** The link dropped: a question still kept once the bounded age passed is told. */
    public void linkDown() {
        synchronized (this) {
            this.bridgeTakesIds = false;
            this.kept.values().forEach(entry -> entry.orphaned |= entry.accepted);
        }
        stateSettled();
        sweepAndPlan();
    }

    /**
     * Tells every orphaned question past its bounded age, and plans the next sweep for when the
     * next one is due: each question is told at its own age, not a whole age after the drop
     * that orphaned it (seen in the storm soak: a question sent again and orphaned 65 s after it
     * was asked was told 125 s after, when its asker had given up waiting).
     */
    private void sweepAndPlan() {
        long next = sweep();
        if (next < 0) {
            return;
        }
        long due = this.nanos.getAsLong() + next;
        synchronized (this) {
            if (this.sweepPlanned && this.plannedFor - due <= 0) {
                return; // one planned already, as early: link events do not each start a chain
            }
            this.sweepPlanned = true;
            this.plannedFor = due;
            this.plansMade++;
        }
        CompletableFuture.delayedExecutor(TimeUnit.NANOSECONDS.toMillis(next) + 50, TimeUnit.MILLISECONDS)
                .execute(() -> plannedSweep(due));
    }

    private void plannedSweep(long due) {
        synchronized (this) {
            if (this.sweepPlanned && this.plannedFor == due) {
                this.sweepPlanned = false;
            }
        }
        sweepAndPlan();
    }

    /** How many sweeps were planned so far (tests: one at a time, however many link events). */
    synchronized int plansMade() {
        return this.plansMade;
    }

    /**
     * The bridge's {@code link.state}: whether it takes ids. The first one after a relink sends each
     * question the last link took and did not end again, or tells its asker.
     */
    public void linkState(boolean takesIds) {
        List<Kept> again = new ArrayList<>();
        List<Kept> told = new ArrayList<>();
        synchronized (this) {
            this.bridgeTakesIds = takesIds;
            if (!this.relinked) {
                return; // a later link.state of the same link: its first settled the wait
            }
            this.relinked = false;
            long now = this.nanos.getAsLong();
            for (var it = this.kept.values().iterator(); it.hasNext();) {
                Kept entry = it.next();
                if (!entry.orphaned) {
                    continue; // taken on this link, or still waiting for its first answer
                }
                if (!takesIds || now - entry.sentAt > this.maxAge.toNanos()) {
                    it.remove();
                    told.add(entry);
                } else if (!entry.resent) {
                    entry.resent = true;
                    entry.orphaned = false;
                    again.add(entry);
                }
                // Sent again once already: this bridge may be the one still answering it (a
                // dropped link to the same bridge); told at the bounded age if nothing came.
            }
        }
        stateSettled(); // a question waiting for this link's word goes on, with an id if it takes them
        told.forEach(this::tell);
        again.forEach(this::resend);
        sweepAndPlan();
    }

    private void resend(Kept entry) {
        JsonObject data = entry.data.deepCopy();
        data.addProperty("resent", true);
        this.trail.accept(entry.id, "resent");
        this.link.request(entry.kind.type, data, this.requestTimeout).whenComplete((answer, error) -> {
            if (error != null || answer == null) {
                if (remove(entry.id)) {
                    tell(entry); // the bridge will not answer it now
                }
                return;
            }
            if (entry.kind == Kind.CHAT) {
                String decision = answer.get("decision").getAsString();
                show(entry.player, answer.get("notice"));
                if (!"accept".equals(decision) && remove(entry.id) && isNull(answer.get("notice"))) {
                    tell(entry); // not a wake for this bridge: nobody will answer it
                }
            } else {
                for (JsonElement line : answer.getAsJsonArray("lines")) {
                    show(entry.player, line);
                }
            }
        });
    }

    /**
     * A question whose link dropped and that no bridge took since (the link stayed down, or it was
     * sent again once already) is told once it is past the bounded age. Returns the nanoseconds
     * until the next orphaned question left is due, or -1 when none is left.
     */
    long sweep() {
        List<Kept> told = new ArrayList<>();
        long next = -1;
        synchronized (this) {
            long now = this.nanos.getAsLong();
            long age = this.maxAge.toNanos();
            for (var it = this.kept.values().iterator(); it.hasNext();) {
                Kept entry = it.next();
                if (!entry.orphaned) {
                    continue;
                }
                long dueIn = entry.sentAt + age - now;
                if (dueIn < 0) {
                    it.remove();
                    told.add(entry);
                } else if (next < 0 || dueIn < next) {
                    next = dueIn;
                }
            }
        }
        told.forEach(this::tell);
        return next;
    }

    private synchronized boolean remove(String id) {
        return this.kept.remove(id) != null;
    }

    private void tell(Kept entry) {
        synchronized (this) {
            markTold(entry.id);
        }
        this.trail.accept(entry.id, "told not delivered");
        Component line = this.messages.line(Messages.NOT_DELIVERED);
        this.platform.runForPlayer(entry.player, () -> this.platform.sendMessage(entry.player, line), () -> { });
    }

    private void show(UUID player, JsonElement text) {
        if (isNull(text)) {
            return;
        }
        Component line = this.renderer.render(Text.fromJson(text.getAsJsonObject()));
        this.platform.runForPlayer(player, () -> this.platform.sendMessage(player, line), () -> { });
    }

    private static boolean isNull(JsonElement element) {
        return element == null || element.isJsonNull();
    }
}
