package dev.mineclaw.testkit;

import com.google.gson.JsonObject;
import dev.mineclaw.core.CoreSettings;
import dev.mineclaw.core.MineclawCore;
import dev.mineclaw.core.link.LinkListener;
import dev.mineclaw.core.link.LinkSettings;
import dev.mineclaw.core.link.LinkState;
import dev.mineclaw.core.link.TokenSource;
import dev.mineclaw.core.managed.BridgeWheel;
import dev.mineclaw.core.managed.ManagedBridge;
import dev.mineclaw.core.managed.ManagedSettings;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * The runnable stand-in server: {@code java -jar mineclaw-testkit.jar --url ... --token-file ...}.
 * JSON lines in on stdin, JSON lines out on stdout, logs on stderr (CONTROL.md).
 */
public final class TestkitMain {
    static final String PLUGIN_VERSION = "0.1.0";
    static final String MINECRAFT_VERSION = "1.21.8";
    /** The data version of 1.21.8. */
    static final int DATA_VERSION = 4440;

    private TestkitMain() {}

    public static void main(String[] args) throws Exception {
        TestkitOptions options;
        try {
            options = TestkitOptions.parse(args);
        } catch (IllegalArgumentException exc) {
            System.err.println("mineclaw-testkit: " + exc.getMessage());
            System.err.println(TestkitOptions.USAGE);
            System.exit(2);
            return;
        }
        // Events own stdout; anything else printing there (a library) would corrupt the stream.
        EventOut out = new EventOut(new FileOutputStream(FileDescriptor.out));
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));

        ThreadRules rules = new ThreadRules(message -> {
            JsonObject event = EventOut.event("thread.violation");
            event.addProperty("message", message);
            out.emit(event);
        });
        TestkitPlatform platform = new TestkitPlatform(options.platform(), out::emit, rules);
        LinkSettings link = LinkSettings.defaults(options.urls());
        if (options.linkTimeout() != null) {  // as the plugin's link-timeout-ms
            link = link.withSilenceTimeout(options.linkTimeout()).withHandshakeTimeout(options.linkTimeout());
        }
        CoreSettings settings = CoreSettings.defaults(link,
                TokenSource.configuredOrFile(options.token(), options.tokenFile()), options.instanceId())
                .withVerdictTimeout(options.verdictTimeout()).withServerId(options.serverId())
                .withMessages(options.locale(), Map.of());
        MineclawCore core = new MineclawCore(platform, settings, linkEvents(out));
        if (options.askTrail()) {  // what becomes of each kept question: a soak's lost one names its step
            core.asks().trail((ask, what) -> {
                JsonObject event = EventOut.event("ask");
                event.addProperty("ask", ask);
                event.addProperty("what", what);
                out.emit(event);
            });
        }
        if (options.managedData() != null) {  // as the plugin's bridge.managed
            URI first = options.urls().get(0);
            ManagedSettings managed = ManagedSettings.of(options.managedPython(), ManagedSettings.systemPath(),
                    options.managedData(), options.managedData().resolve("wheelhouse"), first.getHost(), first.getPort());
            // The wheel a plugin jar put on the class path carries (read as MineclawPlugin reads its own
            // jar), or one given as a file.
            Optional<BridgeWheel> wheel = options.managedWheel().toString().equals(TestkitOptions.WHEEL_FROM_CLASS_PATH)
                    ? BridgeWheel.fromResources(TestkitMain.class.getClassLoader())
                    : Optional.of(new BridgeWheel(options.managedWheel().getFileName().toString(),
                            Files.readAllBytes(options.managedWheel())));
            core.manage(new ManagedBridge(managed, wheel, platform.logger()));
        }
        ControlLoop loop = new ControlLoop(platform, core, out);

        out.emit(EventOut.event("ready"));
        core.start();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            loop.run(in);
        } finally {
            core.stop();
            loop.stop();
            platform.shutdown();
        }
        System.exit(0);
    }

    private static LinkListener linkEvents(EventOut out) {
        return new LinkListener() {
            @Override
            public void linkUp(String sessionId) {
                JsonObject event = EventOut.event("link.up");
                event.addProperty("session_id", sessionId);
                out.emit(event);
            }

            @Override
            public void linkDown(String reason) {
                JsonObject event = EventOut.event("link.down");
                event.addProperty("reason", reason);
                out.emit(event);
            }

            @Override
            public void linkState(LinkState state) {
                JsonObject event = EventOut.event("link.state");
                event.addProperty("forward", state.forwardAll() ? "all" : "prefixed");
                event.addProperty("public_prefix", state.publicPrefix());
                out.emit(event);
            }
        };
    }
}
