package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mineclaw.core.CoreSettings;
import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.link.LinkListener;
import dev.mineclaw.core.link.LinkSettings;
import dev.mineclaw.core.link.LinkState;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Bad control lines get an error event naming the problem, and the loop goes on. */
class ControlLoopTest {
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final EventOut out = new EventOut(this.stdout);
    private final ThreadRules rules = new ThreadRules(message -> { });
    private final TestkitPlatform platform = new TestkitPlatform("testkit", this.out::emit, this.rules);
    // Never started: the link stays down, which is all these cases need.
    private final MineclawCore core = new MineclawCore(this.platform,
            CoreSettings.defaults(LinkSettings.defaults(URI.create("ws://127.0.0.1:1/link")), () -> "token",
                    UUID.randomUUID()),
            new LinkListener() {
                @Override
                public void linkUp(String sessionId) {
                }

                @Override
                public void linkDown(String reason) {
                }

                @Override
                public void linkState(LinkState state) {
                }
            });
    private final ControlLoop loop = new ControlLoop(this.platform, this.core, this.out);

    @AfterEach
    void stop() {
        this.loop.stop();
        this.core.stop();
        this.platform.shutdown();
    }

    private List<JsonObject> events() {
        List<JsonObject> events = new ArrayList<>();
        for (String line : this.stdout.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isEmpty()) {
                events.add(JsonParser.parseString(line).getAsJsonObject());
            }
        }
        return events;
    }

    private String errorFor(String line) {
        int before = events().size();
        assertTrue(this.loop.handle(line), "only shutdown stops the loop");
        List<JsonObject> after = events();
        assertEquals(before + 1, after.size(), "one event for " + line);
        JsonObject event = after.get(after.size() - 1);
        assertEquals("error", event.get("event").getAsString(), event.toString());
        return event.get("message").getAsString();
    }

    @Test
    void badLinesAreReportedWithWhatIsWrong() {
        assertTrue(errorFor("{\"op\":").contains("unparseable"));
        assertTrue(errorFor("[1,2]").contains("JSON object"));
        assertTrue(errorFor("{\"no\":\"op\"}").contains("'op'"));
        assertTrue(errorFor("{\"op\":\"fly\"}").contains("unknown op 'fly'"));
        assertTrue(errorFor("{\"op\":\"player.add\",\"name\":\"bad name!\"}").contains("bad name!"));
        assertTrue(errorFor("{\"op\":\"player.add\",\"name\":\"Steve\",\"uuid\":\"x\"}").contains("uuid"));
        assertTrue(errorFor("{\"op\":\"player.add\",\"name\":\"Steve\",\"permissions\":\"all\"}")
                .contains("'permissions'"));
        assertTrue(errorFor("{\"op\":\"player.remove\",\"name\":\"Ghost\"}").contains("Ghost"));
        assertTrue(errorFor("{\"op\":\"command\",\"sender\":\"Ghost\",\"args\":[],\"ref\":\"r\"}").contains("Ghost"));
        assertTrue(errorFor("{\"op\":\"bench.chat\",\"player\":\"Steve\",\"rate\":0}").contains("'rate'"));
        assertTrue(errorFor("{\"op\":\"bench.chat\",\"player\":\"Steve\",\"seconds\":-1}").contains("'seconds'"));
    }

    @Test
    void errorKeepsTheRef() {
        this.loop.handle("{\"op\":\"chat\",\"player\":\"Ghost\",\"text\":\"hi\",\"ref\":\"c7\"}");
        JsonObject event = events().get(0);
        assertEquals("c7", event.get("ref").getAsString());
    }

    @Test
    void aNameOrUuidCannotBeOnlineTwice() {
        assertTrue(this.loop.handle("{\"op\":\"player.add\",\"name\":\"Steve\"}"));
        assertTrue(events().isEmpty(), events().toString());
        assertTrue(errorFor("{\"op\":\"player.add\",\"name\":\"steve\"}").contains("online"));
    }

    @Test
    void shutdownStopsTheLoop() {
        assertFalse(this.loop.handle("{\"op\":\"shutdown\"}"));
    }
}
