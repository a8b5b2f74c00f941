package dev.mineclaw.core.wire;

import com.google.gson.JsonObject;
import java.util.Objects;

/**
 * One envelope of the link protocol. {@code re} is {@code null} except on answers and errors.
 * The data object is owned by the frame: callers must not mutate it after construction.
 */
public final class Frame {
    private final String id;
    private final String type;
    private final String re;
    private final JsonObject data;

    public Frame(String id, String type, String re, JsonObject data) {
        this.id = Objects.requireNonNull(id, "id");
        this.type = Objects.requireNonNull(type, "type");
        this.re = re;
        this.data = Objects.requireNonNull(data, "data");
    }

    public String id() {
        return this.id;
    }

    public String type() {
        return this.type;
    }

    /** The id of the request this frame answers, or {@code null}. */
    public String re() {
        return this.re;
    }

    public JsonObject data() {
        return this.data;
    }

    /** Whether this frame is an answer ({@code *.result}) or an error frame. */
    public boolean isAnswer() {
        return MessageTypes.isAnswerType(this.type);
    }

    @Override
    public String toString() {
        return "Frame[" + this.type + " id=" + this.id + (this.re == null ? "" : " re=" + this.re) + "]";
    }
}
