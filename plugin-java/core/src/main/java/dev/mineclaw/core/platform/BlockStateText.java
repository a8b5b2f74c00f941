package dev.mineclaw.core.platform;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the state properties out of a block state's text form, as servers print it:
 * {@code minecraft:oak_stairs[facing=north,half=bottom]}. Only names and values made of
 * {@code [a-z0-9_]} are kept; anything else in the text is skipped, never an error.
 */
public final class BlockStateText {
    /** More properties than any vanilla block has; a longer list is cut here. */
    public static final int MAX_PROPERTIES = 32;

    private BlockStateText() {}

    /** The properties in the order written; empty when the text has none. */
    public static Map<String, String> properties(String stateText) {
        Map<String, String> out = new LinkedHashMap<>();
        int open = stateText.indexOf('[');
        int close = stateText.lastIndexOf(']');
        if (open < 0 || close < open) {
            return Map.copyOf(out);
        }
        for (String pair : stateText.substring(open + 1, close).split(",", -1)) {
            int equals = pair.indexOf('=');
            if (equals <= 0 || out.size() >= MAX_PROPERTIES) {
                continue;
            }
            String name = pair.substring(0, equals).strip();
            String value = pair.substring(equals + 1).strip();
            if (simple(name) && simple(value)) {
                out.putIfAbsent(name, value);
            }
        }
        return java.util.Collections.unmodifiableMap(out);
    }

    private static boolean simple(String text) {
        if (text.isEmpty() || text.length() > 64) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')) {
                return false;
            }
        }
        return true;
    }
}
