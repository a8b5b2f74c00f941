package dev.mineclaw.core.snapshot;

import java.util.regex.Pattern;

/**
 * Puts raw server facts inside the protocol's bounds: rounding, clamping, key checks, and the
 * cleaning of player-written text. A broken fact (NaN health, a key of another shape) becomes a
 * safe value or is left out; it never reaches the wire as something the bridge would refuse.
 */
final class Bounds {
    /** docs/protocol.md, NamespacedKey. */
    static final Pattern NAMESPACED_KEY = Pattern.compile("[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}");
    static final double COORDINATE_MAX = 1e9;
    static final double AMOUNT_MAX = 1e9;
    static final int WORLD_MAX = 64;

    private Bounds() {}

    /** {@code value} clamped to {@code min..max} and rounded to 0.01; NaN reads as 0. */
    static double round2(double value, double min, double max) {
        double clamped = Double.isNaN(value) ? 0 : Math.max(min, Math.min(max, value));
        return Math.round(clamped * 100) / 100.0;
    }

    static int clamp(long value, int min, int max) {
        return (int) Math.max(min, Math.min(max, value));
    }

    /** Yaw in -180..180 whatever the server's convention (some report 0..360 or beyond). */
    static double yaw(float raw) {
        double degrees = Float.isFinite(raw) ? raw : 0;
        double normalized = ((degrees + 180) % 360 + 360) % 360 - 180;
        return round2(normalized, -180, 180);
    }

    static boolean isKey(String key) {
        return key != null && NAMESPACED_KEY.matcher(key).matches();
    }

    /** A key the snapshot cannot do without; a platform that supplies another shape has a bug. */
    static String requireKey(String key, String what) {
        if (!isKey(key)) {
            throw new IllegalStateException(what + " is not a namespaced key: " + key);
        }
        return key;
    }

    /** A world name cut to the protocol's 64 characters; an empty one is a platform bug. */
    static String world(String name) {
        String cut = cutCodePoints(name, WORLD_MAX);
        if (cut.isEmpty()) {
            throw new IllegalStateException("the world has no name");
        }
        return cut;
    }

    /**
     * Text a player wrote (an item name), made inert as data: control and format characters
     * (which include bidirectional overrides and zero-width marks), line and paragraph
     * separators, legacy {@code §} codes and unpaired surrogates removed, whitespace at the ends
     * trimmed, cut to {@code max} code points. Null when nothing is left.
     */
    static String untrusted(String raw, int max) {
        if (raw == null) {
            return null;
        }
        StringBuilder kept = new StringBuilder(Math.min(raw.length(), max * 2));
        raw.codePoints().filter(Bounds::isShowable).forEach(kept::appendCodePoint);
        String cut = cutCodePoints(kept.toString().strip(), max).strip();
        return cut.isEmpty() ? null : cut;
    }

    private static boolean isShowable(int codePoint) {
        if (codePoint == '\u00a7') {
            return false;
        }
        int type = Character.getType(codePoint);
        return type != Character.CONTROL && type != Character.FORMAT && type != Character.SURROGATE
                && type != Character.LINE_SEPARATOR && type != Character.PARAGRAPH_SEPARATOR
                && type != Character.UNASSIGNED && type != Character.PRIVATE_USE;
    }

    static String cutCodePoints(String text, int max) {
        if (text.codePointCount(0, text.length()) <= max) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, max));
    }
}
