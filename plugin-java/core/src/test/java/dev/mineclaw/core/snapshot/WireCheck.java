package dev.mineclaw.core.snapshot;

import com.google.gson.JsonObject;
import dev.mineclaw.core.wire.Direction;
import dev.mineclaw.core.wire.Frame;
import dev.mineclaw.core.wire.FrameCodec;

/** Sends a projection through the codec's own outgoing check, as the link does before sending. */
final class WireCheck {
    private static final FrameCodec CODEC = new FrameCodec();

    private WireCheck() {}

    /** Throws a WireException naming the field when {@code data} is not a valid answer to {@code request}. */
    static JsonObject answer(String request, JsonObject data) {
        CODEC.check(new Frame("p-1", request + ".result", "b-1", data), Direction.PLUGIN_TO_BRIDGE);
        return data;
    }
}
