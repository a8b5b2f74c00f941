package dev.mineclaw.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.support.LogLines;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** command.dispatch as the console: every command leaves a server-log line, late feedback is kept. */
class ConsoleDispatchTest {
    private final FakePlatform platform = new FakePlatform();
    private LogLines log;

    private JsonObject dispatch(String command) throws Exception {
        this.log = LogLines.on(this.platform.logger());
        BridgeRequests requests = new BridgeRequests(this.platform, new TextRenderer(),
                Duration.ofSeconds(10), Duration.ofSeconds(2));
        JsonObject data = new JsonObject();
        data.addProperty("executor", "console");
        data.addProperty("command", command);
        return requests.dispatch(data).get(20, TimeUnit.SECONDS);
    }

    @AfterEach
    void detach() {
        if (this.log != null) {
            this.platform.logger().removeHandler(this.log);
        }
    }

    @Test
    void eachConsoleCommandIsNamedInTheServerLog() throws Exception {
        JsonObject answer = dispatch("say hello");
        assertEquals("dispatched", answer.get("dispatch_status").getAsString());
        List<String> lines = this.log.lines();
        assertTrue(lines.contains("INFO assistant runs a console command: /say hello"), lines.toString());
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
