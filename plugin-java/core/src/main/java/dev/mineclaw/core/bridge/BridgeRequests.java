package dev.mineclaw.core.bridge;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.ConsoleDispatch;
import dev.mineclaw.core.platform.FeedbackCollector;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.platform.Scheduling;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import dev.mineclaw.core.wire.MessageTypes;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import net.kyori.adventure.text.Component;

/**
 * Serves what the bridge asks of the plugin, each on the executor the thread rules require:
 * {@code output.chat}, {@code output.actionbar}, {@code players.list}, {@code command.dispatch}.
 */
public final class BridgeRequests {
    /**
     * How long a console command's feedback is collected after it was dispatched: plugin commands
     * often answer a tick or more later, from a scheduled task. Well inside the bridge's 10 s.
     */
    public static final Duration FEEDBACK_WINDOW = Duration.ofMillis(500);

    private final Platform platform;
    private final TextRenderer renderer;
    private final Duration timeout;
    private final Duration feedbackWindow;

    private volatile java.util.function.Predicate<String> answered = ask -> true;

    /** @param timeout how long platform work may take before the request fails (under the bridge's 10 s) */
    public BridgeRequests(Platform platform, TextRenderer renderer, Duration timeout) {
        this(platform, renderer, timeout, FEEDBACK_WINDOW);
    }

    /** @param feedbackWindow how long a console command's feedback is collected after dispatch */
    public BridgeRequests(Platform platform, TextRenderer renderer, Duration timeout, Duration feedbackWindow) {
        this.platform = platform;
        this.renderer = renderer;
        this.timeout = timeout;
        this.feedbackWindow = feedbackWindow;
    }

    /** Registers every handler on {@code link}. */
    public void register(LinkClient link) {
        link.onRequest("output.chat", this::outputChat);
        link.onEvent("output.actionbar", this::actionBar);
        link.onRequest("players.list", data -> CompletableFuture.completedFuture(playersList()));
        link.onRequest("command.dispatch", this::dispatch);
    }

    /** Told the id of each question an {@code output.chat} line answers or ends (since 1.5). */
    public void onAnswered(java.util.function.Predicate<String> listener) {
        this.answered = listener;
    }

    CompletableFuture<JsonObject> outputChat(JsonObject data) {
        if (data.has("ask") && !this.answered.test(data.get("ask").getAsString())) {
            // Its asker was told it was not sent: never both told and answered.
            return CompletableFuture.completedFuture(delivered(0));
        }
        Component text = this.renderer.render(Text.fromJson(data.getAsJsonObject("text")));
        if ("broadcast".equals(data.get("target").getAsString())) {
            return Scheduling.onGlobal(this.platform, this.timeout, () -> delivered(this.platform.broadcast(text)));
        }
        UUID player = UUID.fromString(data.get("player").getAsString());
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> {
            this.platform.sendMessage(player, text);
            return delivered(1);
        });
    }

    void actionBar(JsonObject data) {
        Component text = this.renderer.render(Text.fromJson(data.getAsJsonObject("text")));
        UUID player = UUID.fromString(data.get("player").getAsString());
        this.platform.runForPlayer(player, () -> this.platform.sendActionBar(player, text),
                () -> this.platform.logger().fine("actionbar: player " + player + " is not online"));
    }

    JsonObject playersList() {
        JsonArray players = new JsonArray();
        List<PlayerRef> online = this.platform.onlinePlayers();
        if (online.size() > MessageTypes.PLAYERS_MAX) {
            this.platform.logger().warning("players.list: " + online.size() + " players online, reporting the first "
                    + MessageTypes.PLAYERS_MAX + " (the protocol's bound)");
        }
        for (PlayerRef player : online.subList(0, Math.min(online.size(), MessageTypes.PLAYERS_MAX))) {
            players.add(player.toJson());
        }
        JsonObject answer = new JsonObject();
        answer.add("players", players);
        return answer;
    }

    CompletableFuture<JsonObject> dispatch(JsonObject data) {
        String command = data.get("command").getAsString();
        if ("console".equals(data.get("executor").getAsString())) {
            return dispatchConsole(command);
        }
        UUID player = UUID.fromString(data.get("player").getAsString());
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> {
            try {
                boolean accepted = this.platform.dispatchAsPlayer(player, command);
                return dispatchAnswer(accepted ? "dispatched" : "rejected", null);
            } catch (RuntimeException exc) {
                this.platform.logger().log(Level.WARNING, "player command failed: " + command, exc);
                return dispatchAnswer("failed", null);
            }
        });
    }

    /**
     * The console command, with a line in the server log saying the assistant ran it (owners must
     * see every command run with the console's rights), and its feedback collected for
     * {@link #feedbackWindow} after dispatch.
     */
    private CompletableFuture<JsonObject> dispatchConsole(String command) {
        FeedbackCollector collector = new FeedbackCollector();
        CompletableFuture<Boolean> dispatched = Scheduling.onGlobal(this.platform, this.timeout, () -> {
            this.platform.logger().info("assistant runs a console command: /" + command);
            return this.platform.dispatchConsole(command, collector);
        });
        return dispatched.handle((accepted, error) -> {
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause()
                        : error;
                this.platform.logger().log(Level.WARNING, "console command failed: " + command, cause);
                return CompletableFuture.completedFuture(dispatchAnswer("failed", new JsonArray()));
            }
            Executor afterWindow = CompletableFuture.delayedExecutor(this.feedbackWindow.toMillis(),
                    TimeUnit.MILLISECONDS);
            return CompletableFuture.supplyAsync(() -> {
                ConsoleDispatch result = collector.result(accepted);
                JsonArray feedback = new JsonArray();
                result.feedback().forEach(feedback::add);
                return dispatchAnswer(accepted ? "dispatched" : "rejected", feedback);
            }, afterWindow);
        }).thenCompose(answer -> answer);
    }

    private static JsonObject delivered(int count) {
        JsonObject answer = new JsonObject();
        answer.addProperty("delivered", count);
        return answer;
    }

    private static JsonObject dispatchAnswer(String status, JsonArray feedback) {
        JsonObject answer = new JsonObject();
        answer.addProperty("dispatch_status", status);
        answer.add("feedback", feedback == null ? JsonNull.INSTANCE : feedback);
        return answer;
    }
}
