package dev.mineclaw.core.link;

import java.net.http.WebSocket;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Keeps one text send in flight at a time, as {@link WebSocket#sendText} requires, and sends the
 * rest in order as each completes.
 */
final class SendQueue {
    private final WebSocket socket;
    private final Consumer<Throwable> onFailure;
    private final ArrayDeque<String> waiting = new ArrayDeque<>();
    private boolean sending;
    private boolean failed;

    SendQueue(WebSocket socket, Consumer<Throwable> onFailure) {
        this.socket = socket;
        this.onFailure = onFailure;
    }

    /** Queues {@code text}; returns false if an earlier send already failed. */
    boolean send(String text) {
        synchronized (this) {
            if (this.failed) {
                return false;
            }
            this.waiting.add(text);
        }
        pump();
        return true;
    }

    private void pump() {
        while (true) {
            String next;
            synchronized (this) {
                if (this.sending || this.failed) {
                    return;
                }
                next = this.waiting.poll();
                if (next == null) {
                    return;
                }
                this.sending = true;
            }
            CompletableFuture<WebSocket> sent = this.socket.sendText(next, true);
            if (!sent.isDone()) {
                sent.whenComplete((socket, error) -> {
                    finished(error);
                    pump();
                });
                return;
            }
            // Already done: loop instead of recursing, so a fast socket cannot grow the stack.
            Throwable error = null;
            try {
                sent.join();
            } catch (RuntimeException exc) {
                error = exc.getCause() != null ? exc.getCause() : exc;
            }
            finished(error);
        }
    }

    private void finished(Throwable error) {
        synchronized (this) {
            this.sending = false;
            if (error != null) {
                this.failed = true;
                this.waiting.clear();
            }
        }
        if (error != null) {
            this.onFailure.accept(error);
        }
    }
}
