package dev.mineclaw.core.wire;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns text frames into validated {@link Frame}s and back. Decoding checks, in this order: JSON
 * syntax and object shape ({@code MALFORMED_FRAME}), the version ({@code UNSUPPORTED_VERSION}, so
 * a future version's envelope is reported as such), the envelope fields ({@code
 * INVALID_ENVELOPE}), the type for the sender's direction ({@code UNKNOWN_TYPE}), {@code re}
 * against the kind, then the data ({@code INVALID_DATA}). The codec is stateless: whether an
 * answer's {@code re} names a request in flight is the link's business.
 */
public final class FrameCodec {
    /** The protocol major version. */
    public static final int VERSION = 1;

    static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern TYPE = Pattern.compile("[a-z][a-z0-9_.]{0,63}");
    private static final Set<String> ENVELOPE = Set.of("v", "id", "type", "re", "data");
    private static final int MESSAGE_MAX = 512;

    private final Gson gson = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    /**
     * Decodes and validates one frame sent in the {@code sender} direction.
     *
     * @throws WireException with the protocol code, the frame's id when it could be read, and
     *     whether it claimed to be an error frame (which is never answered)
     */
    public Frame decode(String text, Direction sender) {
        JsonObject root = parseObject(text);
        try {
            return validate(root, sender);
        } catch (WireException exc) {
            JsonElement type = root.get("type");
            String typeName = type != null && type.isJsonPrimitive() ? type.getAsString() : "";
            String answered = MessageTypes.isAnswerType(typeName) ? readable(root.get("re")) : null;
            throw exc.about(readable(root.get("id")), MessageTypes.ERROR.equals(typeName), answered);
        }
    }

    /**
     * Checks a frame this side is about to send, so a bug here fails loudly before the wire: its
     * schema, and that every string is Unicode text (an unpaired surrogate, say from a player's
     * input, cannot be encoded as UTF-8 and would fail the socket).
     */
    public void check(Frame frame, Direction sender) {
        JsonObject root = toJson(frame);
        StrictJson.requireUnicode(root);
        validate(root, sender);
    }

    /** The frame as one line of JSON text. */
    public String encode(Frame frame) {
        return this.gson.toJson(toJson(frame));
    }

    /** An error frame answering {@code re} (which may be null when the id was unreadable). */
    public static Frame error(String id, String re, ErrorCode code, String message) {
        JsonObject data = new JsonObject();
        data.addProperty("code", code.name());
        String bounded = message == null ? "" : message;
        if (bounded.length() > MESSAGE_MAX) {
            bounded = bounded.substring(0, MESSAGE_MAX - 3) + "...";
        }
        data.addProperty("message", bounded);
        return new Frame(id, MessageTypes.ERROR, re, data);
    }

    private JsonObject toJson(Frame frame) {
        JsonObject root = new JsonObject();
        root.addProperty("v", VERSION);
        root.addProperty("id", frame.id());
        root.addProperty("type", frame.type());
        if (frame.re() != null) {
            root.addProperty("re", frame.re());
        }
        root.add("data", frame.data());
        return root;
    }

    private static JsonObject parseObject(String text) {
        JsonElement root = StrictJson.parse(text);
        if (!root.isJsonObject()) {
            throw new WireException(ErrorCode.MALFORMED_FRAME, "the frame is not a JSON object");
        }
        return root.getAsJsonObject();
    }

    private static String readable(JsonElement id) {
        if (id != null && id.isJsonPrimitive() && id.getAsJsonPrimitive().isString()
                && ID.matcher(id.getAsString()).matches()) {
            return id.getAsString();
        }
        return null;
    }

    private static Frame validate(JsonObject root, Direction sender) {
        Fields envelope = new Fields(root, "frame", ErrorCode.INVALID_ENVELOPE);
        if (!root.has("v")) {
            throw new WireException(ErrorCode.INVALID_ENVELOPE, "missing field frame.v");
        }
        Long version = Fields.integerValue(root.get("v"));
        if (version == null) {
            throw envelope.fail("v", "must be an integer");
        }
        if (version != VERSION) {
            throw new WireException(ErrorCode.UNSUPPORTED_VERSION, "protocol version " + version + " is not supported");
        }
        envelope.only(ENVELOPE, Set.of("v", "id", "type", "data"));
        String id = envelope.string("id", 1, 64, ID);
        String type = envelope.string("type", 1, 64, TYPE);
        String re = root.has("re") ? envelope.string("re", 1, 64, ID) : null;
        if (!root.get("data").isJsonObject()) {
            throw envelope.fail("data", "must be an object");
        }
        JsonObject data = root.getAsJsonObject("data");
        Fields dataFields = new Fields(data, "data", ErrorCode.INVALID_DATA);

        if (MessageTypes.ERROR.equals(type)) {
            errorData(dataFields);
        } else if (type.endsWith(MessageTypes.RESULT_SUFFIX)) {
            MessageTypes.Spec request = MessageTypes.answered(type, sender);
            if (request == null) {
                throw new WireException(ErrorCode.UNKNOWN_TYPE, "unknown type '" + type + "' in this direction");
            }
            if (re == null) {
                throw new WireException(ErrorCode.INVALID_ENVELOPE, "missing field frame.re on an answer");
            }
            request.answer().accept(dataFields);
        } else {
            MessageTypes.Spec spec = MessageTypes.spec(type, sender);
            if (spec == null) {
                throw new WireException(ErrorCode.UNKNOWN_TYPE, "unknown type '" + type + "' in this direction");
            }
            if (re != null) {
                throw new WireException(ErrorCode.INVALID_ENVELOPE, "frame.re is only allowed on answers and errors");
            }
            spec.data().accept(dataFields);
        }
        return new Frame(id, type, re, data);
    }

    private static void errorData(Fields data) {
        data.only(Set.of("code", "message"), Set.of("code", "message"));
        String code = data.string("code", 1, 64, null);
        if (ErrorCode.fromWire(code) == null) {
            throw data.fail("code", "is not a code that may be sent: '" + code + "'");
        }
        data.string("message", 0, MESSAGE_MAX, null);
    }
}
