package dev.mineclaw.core.gamefacts;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the item type a player meant: {@code beacon}, {@code minecraft:beacon}, {@code Beacon},
 * {@code oak planks} and {@code sticks} name one item exactly; a near miss ({@code beakon}) or a
 * name several items share is never taken for one of them, it is answered with the closest keys
 * so the model can ask again or ask the player.
 */
final class NameResolver {
    /** The most keys a near miss is answered with. */
    static final int SUGGESTIONS_MAX = 8;
    /** Longer queries are not compared letter by letter (nothing is that long, and it bounds the work). */
    private static final int NEAR_QUERY_MAX = 64;

    /** How sure the resolution is. */
    enum Match {
        EXACT, NEAR, NONE;

        String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The outcome: {@code item} only when {@code EXACT}; {@code suggestions} only when not. */
    record Resolution(Match match, String item, List<String> suggestions) {
        static Resolution exact(String item) {
            return new Resolution(Match.EXACT, item, List.of());
        }

        static Resolution near(List<String> suggestions) {
            return suggestions.isEmpty() ? new Resolution(Match.NONE, null, List.of())
                    : new Resolution(Match.NEAR, null, List.copyOf(suggestions));
        }
    }

    private final Set<String> keys;
    private final Map<String, List<String>> byPath = new HashMap<>();
    /** Every key with its path and its path between underscores, made once for the near-miss search. */
    private final List<Known> known = new ArrayList<>();

    private record Known(String key, String path, String words, int[] letters) {}

    NameResolver(Collection<String> keys) {
        this.keys = new TreeSet<>(keys);
        for (String key : this.keys) {
            this.byPath.computeIfAbsent(path(key), path -> new ArrayList<>()).add(key);
            this.known.add(new Known(key, path(key), "_" + path(key) + "_", letters(path(key))));
        }
        this.byPath.values().forEach(list -> list.sort(VANILLA_FIRST));
    }

    /** Vanilla's key before another namespace's of the same path, then alphabetical. */
    static final Comparator<String> VANILLA_FIRST = Comparator
            .comparing((String key) -> !key.startsWith("minecraft:"))
            .thenComparing(Comparator.naturalOrder());

    boolean knows(String key) {
        return this.keys.contains(key);
    }

    Resolution resolve(String query) {
        String wanted = normalise(query);
        if (wanted.isEmpty()) {
            return Resolution.near(List.of());
        }
        int colon = wanted.indexOf(':');
        if (colon >= 0) {
            if (this.keys.contains(wanted)) {
                return Resolution.exact(wanted);
            }
            // minecraft:beakon, or a namespace that has no such item: suggest by the path alone.
            return Resolution.near(near(wanted.substring(colon + 1)));
        }
        Resolution byPath = byPath(wanted);
        if (byPath != null) {
            return byPath;
        }
        for (String singular : singulars(wanted)) {
            List<String> found = this.byPath.get(singular);
            if (found != null && found.size() == 1) {
                return Resolution.exact(found.get(0));
            }
        }
        return Resolution.near(near(wanted));
    }

    private Resolution byPath(String path) {
        List<String> found = this.byPath.get(path);
        if (found == null) {
            return null;
        }
        // One path in two namespaces: both are shown, neither is chosen.
        return found.size() == 1 ? Resolution.exact(found.get(0))
                : Resolution.near(found.subList(0, Math.min(SUGGESTIONS_MAX, found.size())));
    }

    /** The closest keys: a few letters off first, then keys that contain the words asked for. */
    private List<String> near(String path) {
        if (path.isEmpty() || path.length() > NEAR_QUERY_MAX) {
            return List.of();
        }
        int allowed = path.length() <= 4 ? 1 : path.length() <= 8 ? 2 : 3;
        record Candidate(String key, int rank, int distance) {}
        List<Candidate> candidates = new ArrayList<>();
        String asWords = "_" + path + "_";
        int[] wanted = letters(path);
        for (Known entry : this.known) {
            String other = entry.path();
            // An edit changes at most two letter counts by one: half the counts' difference is a
            // lower bound of the distance, and far cheaper than the distance itself.
            if (Math.abs(other.length() - path.length()) <= allowed
                    && countsDiffer(wanted, entry.letters()) <= 2 * allowed) {
                int distance = distance(path, other, allowed);
                if (distance <= allowed) {
                    candidates.add(new Candidate(entry.key(), 0, distance));
                    continue;
                }
            }
            if (other.length() > path.length() && (other.startsWith(path) || entry.words().contains(asWords))) {
                candidates.add(new Candidate(entry.key(), 1, other.length()));
            }
        }
        candidates.sort(Comparator.comparingInt(Candidate::rank).thenComparingInt(Candidate::distance)
                .thenComparing(Candidate::key, VANILLA_FIRST));
        return candidates.stream().limit(SUGGESTIONS_MAX).map(Candidate::key).toList();
    }

    /** Lower case, spaces and dashes as underscores, {@code minecraft:} kept when written. */
    static String normalise(String query) {
        String lower = query.strip().toLowerCase(Locale.ROOT);
        StringBuilder out = new StringBuilder(lower.length());
        boolean gap = false;
        for (int i = 0; i < lower.length(); i++) {
            char c = lower.charAt(i);
            if (c == ' ' || c == '-' || c == '_' || Character.isWhitespace(c)) {
                gap = out.length() > 0;
                continue;
            }
            if (gap) {
                out.append('_');
                gap = false;
            }
            out.append(c);
        }
        return out.toString().replace("_:", ":").replace(":_", ":");
    }

    private static List<String> singulars(String path) {
        List<String> forms = new ArrayList<>(2);
        if (path.endsWith("es")) {
            forms.add(path.substring(0, path.length() - 2));
        }
        if (path.endsWith("s") && path.length() > 1) {
            forms.add(path.substring(0, path.length() - 1));
        }
        return forms;
    }

    /** How often each letter, digit and anything else occurs (38 buckets). */
    static int[] letters(String text) {
        int[] counts = new int[38];
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            counts[c >= 'a' && c <= 'z' ? c - 'a' : c >= '0' && c <= '9' ? 26 + c - '0' : c == '_' ? 36 : 37]++;
        }
        return counts;
    }

    private static int countsDiffer(int[] a, int[] b) {
        int differ = 0;
        for (int i = 0; i < a.length; i++) {
            differ += Math.abs(a[i] - b[i]);
        }
        return differ;
    }

    static String path(String key) {
        return key.substring(key.indexOf(':') + 1);
    }

    /**
     * The optimal string alignment distance (edits, with a swap of neighbours as one), or
     * {@code limit + 1} as soon as it must be larger than {@code limit}.
     */
    static int distance(String a, String b, int limit) {
        int[] before = new int[b.length() + 1];
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            int best = current[0];
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int value = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    value = Math.min(value, before[j - 2] + 1);
                }
                current[j] = value;
                best = Math.min(best, value);
            }
            if (best > limit) {
                return limit + 1;
            }
            int[] spare = before;
            before = previous;
            previous = current;
            current = spare;
        }
        return previous[b.length()];
    }
}
