package dev.mineclaw.core.managed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mineclaw.core.CoreSettings;
import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.command.CommandSender;
import dev.mineclaw.core.link.LinkSettings;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.support.FakePlatform.Shown;
import dev.mineclaw.core.support.RecordingListener;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code /mineclaw bridge status}: answered by the plugin itself, to the owner's node only. */
@Timeout(60)
class BridgeStatusCommandTest {
    @TempDir
    Path tmp;

    private final FakePlatform platform = new FakePlatform();
    private MineclawCore core;

    @AfterEach
    void stop() {
        if (this.core != null) {
            this.core.stop();
        }
        this.platform.shutdown();
    }

    private MineclawCore core() {
        // Never started: the link is not needed for what the plugin answers itself.
        CoreSettings settings = CoreSettings.defaults(LinkSettings.defaults(URI.create("ws://127.0.0.1:9/link")),
                () -> "x".repeat(43), UUID.randomUUID());
        this.core = new MineclawCore(this.platform, settings, new RecordingListener());
        return this.core;
    }

    @Test
    void withoutTheManagedBridgeTheStatusSaysTheOptionIsOff() throws Exception {
        core().command(CommandSender.CONSOLE, List.of("bridge", "status")).get();
        assertEquals(List.of(new Shown("console",
                "this plugin does not run the bridge (bridge.managed is off in plugin-link.yml)")),
                this.platform.shown());
    }

    @Test
    void theStatusShowsTheStateVersionRestartsAndTheLastProblemToTheOwnerOnly() throws Exception {
        MineclawCore core = core();
        Path missing = this.tmp.resolve("no/python3");
        ManagedSettings settings = new ManagedSettings(missing.toString(), List.of(),
                Files.createDirectories(this.tmp.resolve("data")), this.tmp.resolve("data/wheelhouse"), "127.0.0.1",
                1, Duration.ofMillis(10), Duration.ofMillis(10), Duration.ofMillis(100), Duration.ofMinutes(1));
        Logger log = Logger.getAnonymousLogger();
        log.setUseParentHandlers(false);
        ManagedBridge bridge = new ManagedBridge(settings, Optional.of(ManagedBridgeTest.WHEEL), log);
        core.manage(bridge);
        bridge.start();
        bridge.await(status -> status.state() == ManagedBridge.State.FAILED);
        PlayerRef guest = this.platform.join("Guest");
        PlayerRef owner = this.platform.join("Owner", "mineclaw.command.reload");
        core.command(CommandSender.player(guest), List.of("bridge", "status")).get();
        core.command(CommandSender.player(owner), List.of("bridge", "status")).get();
        core.command(CommandSender.CONSOLE, List.of("bridge")).get();
        String problem = "last problem: no Python at " + missing + " (bridge.python): install Python 3.11 or newer"
                + " there or name another";
        assertEquals(List.of(
                new Shown("Guest", this.platform.shown().get(0).text()),
                new Shown("Owner", "managed bridge 1.2.3: failed, 0 restarts"),
                new Shown("Owner", problem),
                new Shown("console", "usage: /mineclaw bridge status")), this.platform.shown());
        assertEquals(true, this.platform.shown().get(0).text().contains("mineclaw.command.reload"),
                this.platform.shown().get(0).text());
    }
}
