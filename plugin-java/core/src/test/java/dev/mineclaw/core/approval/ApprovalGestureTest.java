package dev.mineclaw.core.approval;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.gesture.GestureAnswers;
import dev.mineclaw.core.platform.PlayerRef;
import dev.mineclaw.core.support.FakePlatform;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code approval.show} tells the gestures about a question it shows with {@code gesture: true}, and only then. */
class ApprovalGestureTest {
    private static final String TOKEN = "q3x7Yh2L0vT9sKd8Wm4nPa";

    private final FakePlatform platform = new FakePlatform();
    private final PlayerRef steve = this.platform.join("Steve");
    private final List<String> approved = new ArrayList<>();
    private final GestureAnswers gestures = new GestureAnswers(System::nanoTime,
            (player, token, gesture) -> this.approved.add(player.name() + " " + token));
    private final ApprovalRequests requests = new ApprovalRequests(this.platform,
            new ApprovalPrompt(new TextRenderer()), Duration.ofSeconds(10), this.gestures);

    @AfterEach
    void stop() {
        this.platform.shutdown();
    }

    private JsonObject show(Boolean gesture) {
        JsonObject label = new JsonObject();
        label.addProperty("template", "[Yes]");
        JsonObject button = new JsonObject();
        button.add("label", label);
        button.add("hover", JsonNull.INSTANCE);
        button.addProperty("answer", "approve");
        button.add("option", JsonNull.INSTANCE);
        JsonArray buttons = new JsonArray();
        buttons.add(button);
        JsonObject prompt = new JsonObject();
        prompt.addProperty("template", "Go?");
        JsonObject data = new JsonObject();
        data.addProperty("player", this.steve.uuidText());
        data.addProperty("token", TOKEN);
        data.add("prompt", prompt);
        data.add("buttons", buttons);
        data.addProperty("expires_ms", 60000);
        if (gesture != null) {
            data.addProperty("gesture", gesture);
        }
        return data;
    }

    @Test
    void aQuestionShownWithGestureTakesTheAskedPlayersGesture() throws Exception {
        assertTrue(this.requests.show(show(true)).get(10, TimeUnit.SECONDS).get("shown").getAsBoolean());
        assertTrue(this.gestures.expecting(this.steve.uuid()));
        assertTrue(this.gestures.sneak(this.steve, true));
        assertEquals(List.of("Steve " + TOKEN), this.approved);
    }

    @Test
    void aPromptWithoutGestureTakesNone() throws Exception {
        this.requests.show(show(null)).get(10, TimeUnit.SECONDS);
        this.requests.show(show(false)).get(10, TimeUnit.SECONDS);
        assertFalse(this.gestures.expecting(this.steve.uuid()));
        assertFalse(this.gestures.sneak(this.steve, true));
        assertEquals(List.of(), this.approved);
    }
}
