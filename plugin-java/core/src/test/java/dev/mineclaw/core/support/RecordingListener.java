package dev.mineclaw.core.support;

import dev.mineclaw.core.link.LinkListener;
import dev.mineclaw.core.link.LinkState;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Records the link's life as strings ("up:s1", "down:...", "state:all:@ai") for bounded waits. */
public final class RecordingListener implements LinkListener {
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    @Override
    public void linkUp(String sessionId) {
        this.events.add("up:" + sessionId);
    }

    @Override
    public void linkDown(String reason) {
        this.events.add("down:" + reason);
    }

    @Override
    public void linkState(LinkState state) {
        this.events.add("state:" + (state.forwardAll() ? "all" : "prefixed") + ":" + state.publicPrefix());
    }

    /** The next event starting with {@code prefix}, skipping others; fails after 10 s. */
    public String await(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            long left = deadline - System.nanoTime();
            String event = left > 0 ? this.events.poll(left, TimeUnit.NANOSECONDS) : null;
            if (event == null) {
                throw new AssertionError("no '" + prefix + "' event within 10 s");
            }
            if (event.startsWith(prefix)) {
                return event;
            }
        }
    }
}
