package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;

/**
 * Parses one JSON value the way the protocol requires (docs/protocol.md, "Decoding a frame"):
 * strict syntax (no NaN, Infinity or single quotes), one value with nothing after it, no key twice
 * in any object, no unpaired surrogate in a string, at most 32 levels of nesting. Numbers keep
 * their literal text, so {@code 1.0} is not mistaken for the integer {@code 1}. Any fault is
 * {@code MALFORMED_FRAME}.
 */
final class StrictJson {
    static final int MAX_DEPTH = 32;

    private StrictJson() {}

    static JsonElement parse(String text) {
        try {
            JsonReader reader = new JsonReader(new StringReader(text));
            reader.setStrictness(Strictness.STRICT);
            JsonElement value = read(reader, 0);
            if (reader.peek() != JsonToken.END_DOCUMENT) {
                throw malformed("text after the JSON value");
            }
            return value;
        } catch (IOException | IllegalStateException | NumberFormatException exc) {
            throw new WireException(ErrorCode.MALFORMED_FRAME, "not valid JSON: " + exc.getMessage(), null, exc);
        }
    }

    private static JsonElement read(JsonReader reader, int depth) throws IOException {
        JsonToken token = reader.peek();
        switch (token) {
            case BEGIN_OBJECT -> {
                checkDepth(depth + 1);
                JsonObject object = new JsonObject();
                reader.beginObject();
                while (reader.hasNext()) {
                    String name = unicode(reader.nextName());
                    if (object.has(name)) {
                        throw malformed("the key '" + name + "' appears twice in one object");
                    }
                    object.add(name, read(reader, depth + 1));
                }
                reader.endObject();
                return object;
            }
            case BEGIN_ARRAY -> {
                checkDepth(depth + 1);
                JsonArray array = new JsonArray();
                reader.beginArray();
                while (reader.hasNext()) {
                    array.add(read(reader, depth + 1));
                }
                reader.endArray();
                return array;
            }
            case STRING -> {
                return new JsonPrimitive(unicode(reader.nextString()));
            }
            case NUMBER -> {
                return new JsonPrimitive(new NumberLiteral(reader.nextString()));
            }
            case BOOLEAN -> {
                return new JsonPrimitive(reader.nextBoolean());
            }
            case NULL -> {
                reader.nextNull();
                return JsonNull.INSTANCE;
            }
            default -> throw malformed("unexpected " + token);
        }
    }

    /** Refuses an unpaired surrogate in any string or key of {@code element}, as {@code INVALID_DATA}. */
    static void requireUnicode(JsonElement element) {
        try {
            walk(element);
        } catch (WireException exc) {
            throw new WireException(ErrorCode.INVALID_DATA, exc.detail());
        }
    }

    private static void walk(JsonElement element) {
        if (element.isJsonObject()) {
            for (var entry : element.getAsJsonObject().entrySet()) {
                unicode(entry.getKey());
                walk(entry.getValue());
            }
        } else if (element.isJsonArray()) {
            element.getAsJsonArray().forEach(StrictJson::walk);
        } else if (element.isJsonPrimitive() && element.getAsJsonPrimitive().isString()) {
            unicode(element.getAsString());
        }
    }

    /** Refuses a string with an unpaired surrogate (only an escape can write one): it is not Unicode text. */
    private static String unicode(String value) {
        for (int i = 0; i < value.length(); i++) {
            char unit = value.charAt(i);
            if (Character.isHighSurrogate(unit) && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(unit)) {
                throw malformed("a string holds an unpaired surrogate at index " + i);
            }
        }
        return value;
    }

    private static void checkDepth(int depth) {
        if (depth > MAX_DEPTH) {
            throw malformed("nested deeper than " + MAX_DEPTH + " levels");
        }
    }

    private static WireException malformed(String why) {
        return new WireException(ErrorCode.MALFORMED_FRAME, why);
    }

    /** A JSON number as written, so integer-ness can be judged from the literal. */
    static final class NumberLiteral extends Number {
        private static final long serialVersionUID = 1L;

        private final String literal;

        NumberLiteral(String literal) {
            this.literal = literal;
        }

        /** Whether the literal is an integer: no fraction, no exponent. */
        boolean isInteger() {
            return this.literal.indexOf('.') < 0 && this.literal.indexOf('e') < 0 && this.literal.indexOf('E') < 0;
        }

        @Override
        public int intValue() {
            return new java.math.BigDecimal(this.literal).intValue();
        }

        @Override
        public long longValue() {
            return new java.math.BigDecimal(this.literal).longValue();
        }

        @Override
        public float floatValue() {
            return Float.parseFloat(this.literal);
        }

        @Override
        public double doubleValue() {
            return Double.parseDouble(this.literal);
        }

        @Override
        public String toString() {
            return this.literal;
        }
    }
}
