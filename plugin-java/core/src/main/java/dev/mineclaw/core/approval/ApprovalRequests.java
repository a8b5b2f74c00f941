package dev.mineclaw.core.approval;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.gesture.GestureAnswers;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.Scheduling;
import dev.mineclaw.core.text.Text;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import net.kyori.adventure.text.Component;

/**
 * Serves {@code approval.show}: renders the prompt by code ({@link ApprovalPrompt}) and sends it
 * to the player's chat on their own executor. The plugin keeps no state about the prompt beyond
 * the token of a question the player may approve by a gesture ({@link GestureAnswers}): the
 * bridge checks every answer.
 */
public final class ApprovalRequests {
    /** The feature a plugin serving this request announces in {@code hello}. */
    public static final String FEATURE = "approvals";

    private final Platform platform;
    private final ApprovalPrompt prompts;
    private final Duration timeout;
    private final GestureAnswers gestures;

    /** @param gestures told about each shown prompt the player may approve by a gesture */
    public ApprovalRequests(Platform platform, ApprovalPrompt prompts, Duration timeout, GestureAnswers gestures) {
        this.platform = platform;
        this.prompts = prompts;
        this.timeout = timeout;
        this.gestures = gestures;
    }

    public void register(LinkClient link) {
        link.onRequest("approval.show", this::show);
    }

    /** Answers {@code approval.show}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> show(JsonObject data) {
        UUID player = UUID.fromString(data.get("player").getAsString());
        Component prompt = this.prompts.render(Text.fromJson(data.getAsJsonObject("prompt")),
                buttons(data.getAsJsonArray("buttons")), data.get("token").getAsString());
        String token = data.get("token").getAsString();
        JsonElement gesture = data.get("gesture");
        Duration expires = Duration.ofMillis(data.get("expires_ms").getAsLong());
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> {
            // Remembered before the prompt is shown: a click the player makes at once must find
            // it to forget it, or a later gesture would answer a question already answered.
            if (gesture != null && gesture.getAsBoolean()) {
                this.gestures.expect(player, token, expires);
            }
            this.platform.sendMessage(player, prompt);
            JsonObject answer = new JsonObject();
            answer.addProperty("shown", true);
            return answer;
        });
    }

    private static List<ApprovalPrompt.Button> buttons(JsonArray raw) {
        List<ApprovalPrompt.Button> buttons = new ArrayList<>();
        for (JsonElement element : raw) {
            JsonObject button = element.getAsJsonObject();
            JsonElement hover = button.get("hover");
            JsonElement option = button.get("option");
            buttons.add(new ApprovalPrompt.Button(
                    Text.fromJson(button.getAsJsonObject("label")),
                    hover == null || hover.isJsonNull() ? null : Text.fromJson(hover.getAsJsonObject()),
                    button.get("answer").getAsString(),
                    option == null || option.isJsonNull() ? null : option.getAsString()));
        }
        return buttons;
    }
}
