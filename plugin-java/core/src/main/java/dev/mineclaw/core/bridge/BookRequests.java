package dev.mineclaw.core.bridge;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.link.LinkClient;
import dev.mineclaw.core.platform.Platform;
import dev.mineclaw.core.platform.Scheduling;
import dev.mineclaw.core.text.Text;
import dev.mineclaw.core.text.TextRenderer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import net.kyori.adventure.text.Component;

/**
 * Serves {@code output.book}: a written book opened on the player's screen (Adventure's book
 * API: nothing is put in their inventory), each page a Text rendered like a chat line, the model's
 * parts with the restricted MiniMessage set. Opened on the player's executor.
 */
public final class BookRequests {
    /** The feature a plugin that can open books announces in {@code hello}. */
    public static final String FEATURE = "books";

    private final Platform platform;
    private final TextRenderer renderer;
    private final Duration timeout;

    public BookRequests(Platform platform, TextRenderer renderer, Duration timeout) {
        this.platform = platform;
        this.renderer = renderer;
        this.timeout = timeout;
    }

    public void register(LinkClient link) {
        link.onRequest("output.book", this::openBook);
    }

    /** Answers {@code output.book}; {@code data} is already validated by the codec. */
    public CompletableFuture<JsonObject> openBook(JsonObject data) {
        UUID player = UUID.fromString(data.get("player").getAsString());
        String title = data.get("title").getAsString();
        List<Component> pages = new ArrayList<>();
        for (JsonElement page : data.getAsJsonArray("pages")) {
            pages.add(this.renderer.render(Text.fromJson(page.getAsJsonObject())));
        }
        List<Component> fixed = List.copyOf(pages);
        return Scheduling.onPlayer(this.platform, player, this.timeout, () -> {
            this.platform.openBook(player, title, fixed);
            JsonObject answer = new JsonObject();
            answer.addProperty("shown", true);
            return answer;
        });
    }
}
