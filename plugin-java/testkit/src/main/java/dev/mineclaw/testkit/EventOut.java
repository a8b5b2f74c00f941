package dev.mineclaw.testkit;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Writes events as JSON lines to stdout, one whole line at a time from any thread. */
final class EventOut {
    private final Gson gson = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();
    private final PrintStream out;

    EventOut(OutputStream stream) {
        this.out = new PrintStream(stream, false, StandardCharsets.UTF_8);
    }

    /** Starts an event object with its name. */
    static JsonObject event(String name) {
        JsonObject event = new JsonObject();
        event.addProperty("event", name);
        return event;
    }

    void emit(JsonObject event) {
        // One write per event: a reader woken by half a line would only wait again.
        String line = this.gson.toJson(event) + '\n';
        synchronized (this) {
            this.out.print(line);
            this.out.flush();
        }
    }

    void error(String message, String ref) {
        JsonObject event = event("error");
        event.addProperty("message", message);
        if (ref != null) {
            event.addProperty("ref", ref);
        }
        emit(event);
    }
}
