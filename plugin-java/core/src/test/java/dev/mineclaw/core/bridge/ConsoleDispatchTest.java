package dev.mineclaw.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** command.dispatch as the console: every command leaves a server-log line, late feedback is kept. */
class ConsoleDispatchTest {
    private final FakePlatform platform = new FakePlatform();
    private final List<String> log = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            ConsoleDispatchTest.this.log.add(record.getLevel() + " " + record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private JsonObject dispatch(String command) throws Exception {
        this.platform.logger().addHandler(this.handler);
        BridgeRequests requests = new BridgeRequests(this.platform, new TextRenderer(),
                Duration.ofSeconds(10), Duration.ofSeconds(2));
        JsonObject data = new JsonObject();
        data.addProperty("executor", "console");
        data.addProperty("command", command);
        return requests.dispatch(data).get(20, TimeUnit.SECONDS);
    }

    @AfterEach
    void detach() {
        this.platform.logger().removeHandler(this.handler);
    }

    @Test
    void eachConsoleCommandIsNamedInTheServerLog() throws Exception {
        JsonObject answer = dispatch("say hello");
        assertEquals("dispatched", answer.get("dispatch_status").getAsString());
        assertTrue(this.log.contains("INFO assistant runs a console command: /say hello"), this.log.toString());
    }

    @Test
    void feedbackWrittenAfterTheCommandReturnedIsCollected() throws Exception {
        this.platform.answerLater("done a tick later");
        JsonArray feedback = dispatch("slowplugin run").getAsJsonArray("feedback");
        assertEquals(2, feedback.size(), feedback.toString());
        assertEquals("ran slowplugin run", feedback.get(0).getAsString());
        assertEquals("done a tick later", feedback.get(1).getAsString());
    }

    @Test
    void anUnknownCommandIsRejectedWithItsFeedback() throws Exception {
        JsonObject answer = dispatch("nosuch thing");
        assertEquals("rejected", answer.get("dispatch_status").getAsString());
    }
}
