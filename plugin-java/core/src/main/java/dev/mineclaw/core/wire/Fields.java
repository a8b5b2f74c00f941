package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import java.math.BigInteger;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks on the fields of a JSON object. Every failure is an {@link WireException} with the code
 * the caller chose and a message naming the field by its path, e.g. {@code data.player.uuid}.
 */
final class Fields {
    private final JsonObject object;
    private final String path;
    private final ErrorCode code;

    Fields(JsonObject object, String path, ErrorCode code) {
        this.object = object;
        this.path = path;
        this.code = code;
    }

    static Fields of(JsonElement element, String path, ErrorCode code) {
        if (element == null || !element.isJsonObject()) {
            throw new WireException(code, path + " must be an object");
        }
        return new Fields(element.getAsJsonObject(), path, code);
    }

    String name(String field) {
        return this.path + "." + field;
    }

    WireException fail(String field, String problem) {
        return new WireException(this.code, name(field) + " " + problem);
    }

    /** Refuses fields outside {@code allowed} and reports the first missing one of {@code required}. */
    Fields only(Set<String> allowed, Set<String> required) {
        for (String key : this.object.keySet()) {
            if (!allowed.contains(key)) {
                throw new WireException(this.code, "unknown field " + name(key));
            }
        }
        for (String key : required) {
            if (!this.object.has(key)) {
                throw new WireException(this.code, "missing field " + name(key));
            }
        }
        return this;
    }

    boolean has(String field) {
        return this.object.has(field);
    }

    boolean isNull(String field) {
        return this.object.has(field) && this.object.get(field).isJsonNull();
    }

    JsonElement raw(String field) {
        return this.object.get(field);
    }

    String string(String field, int min, int max, Pattern pattern) {
        JsonElement value = this.object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw fail(field, "must be a string");
        }
        return checkString(field, value.getAsString(), min, max, pattern);
    }

    String checkString(String field, String value, int min, int max, Pattern pattern) {
        int length = value.codePointCount(0, value.length());
        if (length < min || length > max) {
            throw fail(field, "must be " + min + "-" + max + " characters, got " + length);
        }
        if (pattern != null && !pattern.matcher(value).matches()) {
            throw fail(field, "does not match " + pattern.pattern());
        }
        return value;
    }

    String oneOf(String field, Set<String> choices) {
        String value = string(field, 0, Integer.MAX_VALUE, null);
        if (!choices.contains(value)) {
            throw fail(field, "must be one of " + choices + ", got '" + value + "'");
        }
        return value;
    }

    boolean bool(String field) {
        JsonElement value = this.object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
            throw fail(field, "must be a boolean");
        }
        return value.getAsBoolean();
    }

    long integer(String field, long min, long max) {
        Long value = integerValue(this.object.get(field));
        if (value == null) {
            throw fail(field, "must be an integer");
        }
        if (value < min || value > max) {
            throw fail(field, "must be between " + min + " and " + max);
        }
        return value;
    }

    /** A finite JSON number, integer or not, within {@code min}..{@code max}. */
    double number(String field, double min, double max) {
        JsonElement value = this.object.get(field);
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            throw fail(field, "must be a number");
        }
        double number = value.getAsDouble();
        if (!(number >= min && number <= max)) {
            throw fail(field, "must be a number between " + min + " and " + max);
        }
        return number;
    }

    /**
     * The value as a long when it is a JSON integer (no fraction or exponent: {@code 1.0} is a
     * float to the Python side too), saturated beyond the long range; otherwise null.
     */
    static Long integerValue(JsonElement value) {
        if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            return null;
        }
        Number number = value.getAsJsonPrimitive().getAsNumber();
        String literal = number.toString();
        if (number instanceof StrictJson.NumberLiteral parsed ? !parsed.isInteger() : !literal.matches("-?[0-9]+")) {
            return null;
        }
        BigInteger exact = new BigInteger(literal);
        if (exact.bitLength() > 63) {
            return exact.signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
        return exact.longValueExact();
    }

    JsonArray array(String field, int maxItems) {
        JsonElement value = this.object.get(field);
        if (value == null || !value.isJsonArray()) {
            throw fail(field, "must be an array");
        }
        JsonArray array = value.getAsJsonArray();
        if (array.size() > maxItems) {
            throw fail(field, "has " + array.size() + " items, at most " + maxItems + " allowed");
        }
        return array;
    }

    Fields object(String field) {
        return Fields.of(this.object.get(field), name(field), this.code);
    }
}
