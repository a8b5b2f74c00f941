package dev.mineclaw.core.link;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Predicate;

/**
 * The requests this side sent on one connection and still waits for. Each ends exactly once:
 * answered, failed by an error frame, timed out, or failed when the connection ends. Ids that
 * timed out are remembered for a while, so a late answer is dropped quietly instead of being
 * reported as unexpected.
 */
final class PendingRequests {
    private static final int REMEMBERED_EXPIRED = 4096;

    /** One request in flight; its timer is attached after registration, so it may still be null. */
    static final class Pending {
        private final String type;
        private final CompletableFuture<JsonObject> answer;
        private volatile ScheduledFuture<?> timer;

        Pending(String type, CompletableFuture<JsonObject> answer) {
            this.type = type;
            this.answer = answer;
        }

        String type() {
            return this.type;
        }

        CompletableFuture<JsonObject> answer() {
            return this.answer;
        }

        void attachTimer(ScheduledFuture<?> timer) {
            this.timer = timer;
            if (this.answer.isDone()) {
                timer.cancel(false);
            }
        }

        void cancelTimer() {
            ScheduledFuture<?> current = this.timer;
            if (current != null) {
                current.cancel(false);
            }
        }
    }

    private final Map<String, Pending> inFlight = new ConcurrentHashMap<>();
    private final Map<String, Boolean> expired = Collections.synchronizedMap(new LinkedHashMap<>(64, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > REMEMBERED_EXPIRED;
        }
    });
    private boolean closed;

    /** Registers a request; false if the connection already ended (the caller fails it). */
    synchronized boolean add(String id, Pending pending) {
        if (this.closed) {
            return false;
        }
        this.inFlight.put(id, pending);
        return true;
    }

    /** Takes the request {@code id} answers, or null when none is in flight. */
    Pending take(String id) {
        Pending pending = this.inFlight.remove(id);
        if (pending != null) {
            pending.cancelTimer();
        }
        return pending;
    }

    /** Takes request {@code id} only if {@code typeMatches} accepts its type; else leaves it in flight. */
    Pending takeIf(String id, Predicate<String> typeMatches) {
        Pending pending = this.inFlight.get(id);
        if (pending == null || !typeMatches.test(pending.type())) {
            return null;
        }
        return take(id);
    }

    /** Fails {@code id} with {@code failure} if it is still in flight; returns whether it was. */
    boolean expire(String id, LinkException failure) {
        Pending pending = this.inFlight.remove(id);
        if (pending != null) {
            this.expired.put(id, Boolean.TRUE);
            pending.answer().completeExceptionally(failure);
            return true;
        }
        return false;
    }

    /** Whether {@code id} timed out earlier, so its answer is merely late. */
    boolean wasExpired(String id) {
        return this.expired.remove(id) != null;
    }

    /** Fails every request in flight and refuses new ones. */
    void closeAll(LinkException failure) {
        List<Pending> all;
        synchronized (this) {
            this.closed = true;
            all = new ArrayList<>(this.inFlight.values());
            this.inFlight.clear();
        }
        for (Pending pending : all) {
            pending.cancelTimer();
            pending.answer().completeExceptionally(failure);
        }
    }

    int size() {
        return this.inFlight.size();
    }
}
