package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TestkitOptionsTest {
    @Test
    void parsesEveryOption() {
        TestkitOptions options = TestkitOptions.parse(new String[] {"--url", "ws://127.0.0.1:9/link", "--token-file",
                "/tmp/t", "--token", "abc", "--instance-id", "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f", "--platform",
                "folia", "--verdict-timeout-ms", "40", "--url", "ws://127.0.0.1:10/link", "--server-id", "lobby"});
        assertEquals(java.util.List.of(java.net.URI.create("ws://127.0.0.1:9/link"),
                java.net.URI.create("ws://127.0.0.1:10/link")), options.urls());
        assertEquals("lobby", options.serverId());
        assertEquals(Path.of("/tmp/t"), options.tokenFile());
        assertEquals("abc", options.token());
        assertEquals(UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"), options.instanceId());
        assertEquals("folia", options.platform());
        assertEquals(Duration.ofMillis(40), options.verdictTimeout());
    }

    @Test
    void defaultsAreTestkitAnd250MillisecondsAndAFreshInstanceId() {
        String[] args = {"--url", "ws://127.0.0.1:9/link", "--token-file", "/tmp/t"};
        TestkitOptions first = TestkitOptions.parse(args);
        assertEquals("testkit", first.platform());
        assertEquals(Duration.ofMillis(250), first.verdictTimeout());
        assertTrue(!first.instanceId().equals(TestkitOptions.parse(args).instanceId()));
    }

    @Test
    void badOptionsNameTheOption() {
        assertMessage("--url is required", "--token-file", "/tmp/t");
        assertMessage("--token-file", "--url", "ws://127.0.0.1:9/link");
        assertMessage("--url must be", "--url", "http://x/link", "--token", "t");
        assertMessage("--platform", "--url", "ws://x/link", "--token", "t", "--platform", "paper");
        assertMessage("--verdict-timeout-ms must be positive", "--url", "ws://x/link", "--token", "t",
                "--verdict-timeout-ms", "0");
        assertMessage("--verdict-timeout-ms must be a number", "--url", "ws://x/link", "--token", "t",
                "--verdict-timeout-ms", "soon");
        assertMessage("--instance-id", "--url", "ws://x/link", "--token", "t", "--instance-id", "nope");
        assertMessage("unknown option --port", "--url", "ws://x/link", "--token", "t", "--port", "1");
        assertMessage("needs a value", "--url");
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException failure = assertThrows(IllegalArgumentException.class,
                () -> TestkitOptions.parse(args));
        assertTrue(failure.getMessage().contains(expected), failure.getMessage());
    }
}
