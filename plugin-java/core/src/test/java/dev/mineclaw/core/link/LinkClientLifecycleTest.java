package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mineclaw.core.support.LogLines;
import dev.mineclaw.core.support.RecordingListener;
import dev.mineclaw.core.support.TestBridge;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** What the link leaves behind: no HTTP client threads after close, no endless log of retries. */
class LinkClientLifecycleTest {
    private static final Pattern ATTEMPT = Pattern.compile("\\(attempt (\\d+) since");

    private static LinkClient client(URI url, Logger logger) {
        LinkSettings settings = LinkSettings.defaults(url).withBackoff(Duration.ofMillis(1), Duration.ofMillis(5));
        Handshake.Identity identity = new Handshake.Identity(UUID.randomUUID(), "0.1.0", "1.21.4", "testkit",
                List.of("chat"));
        return new LinkClient(settings, identity, () -> "token", new RecordingListener(), logger);
    }

    @Test
    void closeStopsTheHttpClient() throws Exception {
        try (TestBridge bridge = new TestBridge("token").begin()) {
            LinkClient client = client(bridge.url(), Logger.getLogger("lifecycle-close"));
            client.start();
            bridge.nextHello();
            client.close();
            assertTrue(client.httpTerminated(Duration.ofSeconds(10)), "the HTTP client still runs after close");
        }
    }

    @Test
    void failedAttemptsInARowAreLoggedAtInfoOnlyAtPowersOfTwo() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort(); // closed again: nothing listens there
        }
        Logger logger = Logger.getLogger("lifecycle-backoff-" + port);
        logger.setUseParentHandlers(false);
        logger.setLevel(Level.ALL);
        LogLines records = LogLines.on(logger);
        LinkClient client = client(URI.create("ws://127.0.0.1:" + port + "/link"), logger);
        client.start();
        List<Integer> loud = new ArrayList<>();
        int seen = 0;
        try {
            while (seen < 20) {
                LogRecord record = records.poll(10_000);
                assertTrue(record != null, "the client stopped retrying");
                Matcher matcher = ATTEMPT.matcher(record.getMessage());
                if (matcher.find()) {
                    seen = Integer.parseInt(matcher.group(1));
                    if (record.getLevel().intValue() >= Level.INFO.intValue()) {
                        loud.add(seen);
                    }
                }
            }
        } finally {
            client.close();
        }
        assertEquals(List.of(1, 2, 4, 8, 16), loud);
    }

    @Test
    void pastTheLoudAttemptsOnlyEveryHundredTwentyEighthIsReported() {
        assertTrue(LinkClient.reportedAttempt(128));
        assertFalse(LinkClient.reportedAttempt(129));
        assertFalse(LinkClient.reportedAttempt(200));
        assertTrue(LinkClient.reportedAttempt(256));
        assertTrue(LinkClient.reportedAttempt(384));
        assertFalse(LinkClient.reportedAttempt(512 + 1));
    }
}
