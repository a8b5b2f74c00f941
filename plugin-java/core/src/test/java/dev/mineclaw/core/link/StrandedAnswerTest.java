package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonObject;
import dev.mineclaw.core.support.RecordingListener;
import dev.mineclaw.core.support.TestBridge;
import java.nio.channels.SelectionKey;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import org.java_websocket.WebSocketAdapter;
import org.java_websocket.WebSocketImpl;
import org.java_websocket.drafts.Draft;
import org.java_websocket.server.DefaultWebSocketServerFactory;
import org.junit.jupiter.api.Test;

/**
 * The test bridge's own library, Java-WebSocket 1.5.7, can strand a frame: its selector thread,
 * finishing a write pass that found the queue empty, sets read-only interest after a worker thread
 * queued an answer and asked for write interest. The hook pauses the selector at exactly that
 * point (as a descheduled thread on a starved machine would) while the bridge answers. The test
 * bridge's flusher must still deliver the answer; without it the request times out.
 */
class StrandedAnswerTest {
    @Test
    void anAnswerQueuedWhileTheSelectorFinishesAWritePassStillLeaves() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        Set<String> bridgeSent = ConcurrentHashMap.newKeySet();
        TestBridge bridge = new TestBridge("t");
        bridge.setWebSocketFactory(new DefaultWebSocketServerFactory() {
            @Override
            public WebSocketImpl createWebSocket(WebSocketAdapter a, List<Draft> d) {
                return new WebSocketImpl(a, d) {
                    @Override
                    public boolean isFlushAndClose() {
                        // Only reached from SocketChannelIOHelper.batch on the selector thread, once outQueue is
                        // empty. Pause only in an iteration whose doRead already ran (it removed the key from the
                        // selected set): the worker is handling the request just read, and answers in the pause.
                        SelectionKey key = getSelectionKey();
                        if (armed.get() && !key.selector().selectedKeys().contains(key)) {
                            armed.set(false);
                            try {
                                Thread.sleep(300);
                            } catch (InterruptedException exc) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        return super.isFlushAndClose();
                    }
                };
            }
        });
        bridge.begin();
        try (bridge) {
            bridge.onFrame((connection, frame) -> {
                String id = frame.get("id").getAsString();
                String text = frame.getAsJsonObject("data").get("text").getAsString();
                if (text.equals("second")) {
                    try {
                        Thread.sleep(50); // answers while the selector is in that pause (a preempted selector)
                    } catch (InterruptedException exc) {
                        Thread.currentThread().interrupt();
                    }
                }
                connection.send(TestBridge.frame("b-" + id, "chat.result", id, LinkClientTest.verdict()));
                bridgeSent.add(text);
            });
            RecordingListener listener = new RecordingListener();
            LinkClient client = new LinkClient(LinkSettings.defaults(bridge.url()).withRequestTimeout(Duration.ofSeconds(3)),
                    new Handshake.Identity(UUID.randomUUID(), "0.1.0", "1.21.8", "testkit", List.of("chat")),
                    () -> "t", listener, Logger.getLogger("stranded"));
            client.start();
            listener.await("up:");
            client.request("chat", LinkClientTest.chatData("first")).get(5, TimeUnit.SECONDS);
            armed.set(true);
            CompletableFuture<JsonObject> second = client.request("chat", LinkClientTest.chatData("second"));
            String outcome;
            try {
                second.get(5, TimeUnit.SECONDS);
                outcome = "answered";
            } catch (ExecutionException exc) {
                outcome = exc.getCause().toString();
            }
            client.close();
            assertEquals(Set.of("first", "second"), bridgeSent);
            assertEquals("answered", outcome);
        }
    }
}
