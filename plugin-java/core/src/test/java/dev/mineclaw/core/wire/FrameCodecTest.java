package dev.mineclaw.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import org.junit.jupiter.api.Test;

/** What the shared vectors do not pin: ids on failures, encoding, error frames, huge numbers. */
class FrameCodecTest {
    private final FrameCodec codec = new FrameCodec();

    @Test
    void failureCarriesTheReadableIdAndNamesTheField() {
        WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                "{\"v\":1,\"id\":\"b-7\",\"type\":\"link.state\",\"data\":{\"forward\":\"some\",\"public_prefix\":\"@ai\"}}",
                Direction.BRIDGE_TO_PLUGIN));
        assertEquals(ErrorCode.INVALID_DATA, failure.code());
        assertEquals("b-7", failure.offendingId());
        assertTrue(failure.detail().contains("data.forward"), failure.detail());
        assertFalse(failure.fromErrorFrame());
    }

    @Test
    void unreadableIdIsNull() {
        WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                "{\"v\":1,\"id\":\"bad id\",\"type\":\"players.list\",\"data\":{}}", Direction.BRIDGE_TO_PLUGIN));
        assertEquals(ErrorCode.INVALID_ENVELOPE, failure.code());
        assertNull(failure.offendingId());
    }

    @Test
    void malformedErrorFrameIsMarkedSoItIsNeverAnswered() {
        WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                "{\"v\":1,\"id\":\"b-1\",\"type\":\"error\",\"data\":{\"code\":\"NOPE\",\"message\":\"\"}}",
                Direction.BRIDGE_TO_PLUGIN));
        assertEquals(ErrorCode.INVALID_DATA, failure.code());
        assertTrue(failure.fromErrorFrame());
    }

    @Test
    void hugeVersionIsUnsupportedNotInvalid() {
        WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                "{\"v\":123456789012345678901234567890,\"id\":\"b-1\",\"type\":\"players.list\",\"data\":{}}",
                Direction.BRIDGE_TO_PLUGIN));
        assertEquals(ErrorCode.UNSUPPORTED_VERSION, failure.code());
    }

    @Test
    void versionWrittenAsFloatIsInvalidEnvelope() {
        // Not a shared vector: the JSON Schema's const 1 accepts 1.0 (see vectors/DISPUTES.md).
        for (String version : new String[] {"1.0", "1e0", "1E0", "10e-1"}) {
            WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                    "{\"v\":" + version + ",\"id\":\"b-1\",\"type\":\"players.list\",\"data\":{}}",
                    Direction.BRIDGE_TO_PLUGIN));
            assertEquals(ErrorCode.INVALID_ENVELOPE, failure.code(), version);
        }
    }

    @Test
    void rawControlCharacterInAStringIsMalformed() {
        WireException failure = assertThrows(WireException.class, () -> this.codec.decode(
                "{\"v\":1,\"id\":\"b-1\",\"type\":\"link.state\",\"data\":{\"forward\":\"all\",\"public_prefix\":\"a\u0001\"}}",
                Direction.BRIDGE_TO_PLUGIN));
        assertEquals(ErrorCode.MALFORMED_FRAME, failure.code());
    }

    @Test
    void encodingKeepsNullsAndHtmlCharacters() {
        JsonObject data = new JsonObject();
        data.addProperty("dispatch_status", "dispatched");
        data.add("feedback", JsonNull.INSTANCE);
        String text = this.codec.encode(new Frame("p-1", "command.dispatch.result", "b-1", data));
        assertEquals("{\"v\":1,\"id\":\"p-1\",\"type\":\"command.dispatch.result\",\"re\":\"b-1\","
                + "\"data\":{\"dispatch_status\":\"dispatched\",\"feedback\":null}}", text);
        JsonObject state = new JsonObject();
        state.addProperty("forward", "all");
        state.addProperty("public_prefix", "<ai>&");
        assertTrue(this.codec.encode(new Frame("b-1", "link.state", null, state)).contains("<ai>&"));
    }

    @Test
    void outgoingUnpairedSurrogateIsRefusedBeforeTheSocket() {
        JsonObject player = new JsonObject();
        player.addProperty("uuid", "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");
        player.addProperty("name", "Steve");
        JsonObject data = new JsonObject();
        data.add("player", player);
        data.add("granted", new com.google.gson.JsonArray());
        data.addProperty("text", "@ai \uD83D");
        WireException failure = assertThrows(WireException.class,
                () -> this.codec.check(new Frame("p-1", "chat", null, data), Direction.PLUGIN_TO_BRIDGE));
        assertEquals(ErrorCode.INVALID_DATA, failure.code());
        data.addProperty("text", "@ai \uD83D\uDE00");
        this.codec.check(new Frame("p-1", "chat", null, data), Direction.PLUGIN_TO_BRIDGE);
    }

    @Test
    void errorMessagesAreBoundedTo512Characters() {
        Frame error = FrameCodec.error("p-1", "b-1", ErrorCode.INTERNAL, "x".repeat(2000));
        assertEquals(512, error.data().get("message").getAsString().length());
        this.codec.check(error, Direction.PLUGIN_TO_BRIDGE);
    }

    @Test
    void checkRefusesAnInvalidOutgoingFrame() {
        JsonObject data = new JsonObject();
        data.addProperty("delivered", -1);
        WireException failure = assertThrows(WireException.class,
                () -> this.codec.check(new Frame("p-1", "output.chat.result", "b-1", data), Direction.PLUGIN_TO_BRIDGE));
        assertEquals(ErrorCode.INVALID_DATA, failure.code());
    }
}
