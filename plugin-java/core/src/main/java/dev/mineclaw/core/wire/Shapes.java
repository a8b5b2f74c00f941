package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** The shared shapes of docs/protocol.md ("Shared shapes") as checks over {@link Fields}. */
final class Shapes {
    static final Pattern UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    static final Pattern PLAYER_NAME = Pattern.compile("\\.?[A-Za-z0-9_]{1,16}");
    static final Pattern TEXT_NAME = Pattern.compile("[a-z][a-z0-9_]{0,31}");
    static final Pattern FEATURE = Pattern.compile("[a-z][a-z0-9_.]{0,63}");
    static final Pattern NONCE = Pattern.compile("[A-Za-z0-9_-]{43}");
    static final Pattern MAC = Pattern.compile("[0-9a-f]{64}");
    /** A server's id in a bridge's {@code servers.yml} (the same pattern as the bridge's). */
    static final Pattern SERVER_ID = Pattern.compile("[a-z0-9][a-z0-9_-]{0,31}");

    /** The permission nodes a sender's facts may name, in the order the spec lists them. */
    static final List<String> GRANTABLE = List.of(
            "mineclaw.command.chat",
            "mineclaw.command.approve",
            "mineclaw.command.listen",
            "mineclaw.command.reload",
            "mineclaw.command.compact",
            "mineclaw.command.clear",
            "mineclaw.command.stop",
            "mineclaw.command.model",
            "mineclaw.command.tools",
            "mineclaw.command.functions",
            "mineclaw.bypass.ratelimit",
            "mineclaw.tool.run_command",
            "mineclaw.command.private",
            "mineclaw.approve.console",
            "mineclaw.usage.others");

    /** A budget tier's name, and its node among the granted facts (the budgets feature). */
    static final Pattern BUDGET_TIER = Pattern.compile("[a-z0-9_-]{1,32}");
    static final Pattern BUDGET_NODE = Pattern.compile("mineclaw\\.budget\\.[a-z0-9_-]{1,32}");
    static final int BUDGET_TIERS = 16;
    /** A node the bridge asks to be reported: lower-case dotted words, as permission plugins name them. */
    static final Pattern REPORT_NODE = Pattern.compile("[a-z0-9_-]{1,32}(\\.[a-z0-9_-]{1,32}){0,7}");
    static final int REPORT_NODES = 32;
    static final int REPORT_NODE_MAX = 128;

    private static final Set<String> GRANTABLE_SET = Set.copyOf(GRANTABLE);
    private static final int TEXT_ENTRIES = 16;
    private static final int TEMPLATE_MAX = 2048;
    private static final int VALUE_MAX = 8192;

    private Shapes() {}

    static void playerRef(Fields ref) {
        ref.only(Set.of("uuid", "name"), Set.of("uuid", "name"));
        ref.string("uuid", 36, 36, UUID);
        ref.string("name", 1, 17, PLAYER_NAME);
    }

    static void granted(Fields owner, String field) {
        JsonArray nodes = owner.array(field, GRANTABLE.size() + BUDGET_TIERS + REPORT_NODES);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < nodes.size(); i++) {
            JsonElement node = nodes.get(i);
            String where = field + "[" + i + "]";
            if (!node.isJsonPrimitive() || !node.getAsJsonPrimitive().isString()) {
                throw owner.fail(where, "must be a string");
            }
            String name = node.getAsString();
            if (!GRANTABLE_SET.contains(name) && !BUDGET_NODE.matcher(name).matches()
                    && !(name.length() <= REPORT_NODE_MAX && REPORT_NODE.matcher(name).matches())) {
                throw owner.fail(where, "is not a known permission node: '" + node.getAsString() + "'");
            }
            if (!seen.add(node.getAsString())) {
                throw owner.fail(where, "repeats '" + node.getAsString() + "'");
            }
        }
    }

    static void budgetTiers(Fields owner, String field) {
        JsonArray tiers = owner.array(field, BUDGET_TIERS);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < tiers.size(); i++) {
            JsonElement tier = tiers.get(i);
            String where = field + "[" + i + "]";
            if (!tier.isJsonPrimitive() || !tier.getAsJsonPrimitive().isString()
                    || !BUDGET_TIER.matcher(tier.getAsString()).matches()) {
                throw owner.fail(where, "must be a tier name of 1-32 of [a-z0-9_-]");
            }
            if (!seen.add(tier.getAsString())) {
                throw owner.fail(where, "repeats '" + tier.getAsString() + "'");
            }
        }
    }

    static void reportNodes(Fields owner, String field) {
        JsonArray nodes = owner.array(field, REPORT_NODES);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < nodes.size(); i++) {
            JsonElement node = nodes.get(i);
            String where = field + "[" + i + "]";
            if (!node.isJsonPrimitive() || !node.getAsJsonPrimitive().isString()
                    || node.getAsString().length() > REPORT_NODE_MAX
                    || !REPORT_NODE.matcher(node.getAsString()).matches()) {
                throw owner.fail(where, "must be a permission node of dotted [a-z0-9_-] words, at most "
                        + REPORT_NODE_MAX + " characters");
            }
            if (!seen.add(node.getAsString())) {
                throw owner.fail(where, "repeats '" + node.getAsString() + "'");
            }
        }
    }

    static void text(Fields text) {
        text.only(Set.of("template", "values", "model"), Set.of("template"));
        text.string("template", 1, TEMPLATE_MAX, null);
        for (String part : List.of("values", "model")) {
            if (!text.has(part)) {
                continue;
            }
            Fields entries = text.object(part);
            JsonElement raw = text.raw(part);
            Set<Map.Entry<String, JsonElement>> all = raw.getAsJsonObject().entrySet();
            if (all.size() > TEXT_ENTRIES) {
                throw text.fail(part, "has " + all.size() + " entries, at most " + TEXT_ENTRIES + " allowed");
            }
            for (Map.Entry<String, JsonElement> entry : all) {
                if (!TEXT_NAME.matcher(entry.getKey()).matches()) {
                    throw entries.fail(entry.getKey(), "is not a valid placeholder name");
                }
                entries.string(entry.getKey(), 0, VALUE_MAX, null);
            }
        }
    }

    static void nullableText(Fields owner, String field) {
        if (!owner.isNull(field)) {
            text(owner.object(field));
        }
    }

    static void stringList(Fields owner, String field, int maxItems, int maxLength) {
        JsonArray items = owner.array(field, maxItems);
        for (int i = 0; i < items.size(); i++) {
            JsonElement item = items.get(i);
            String where = field + "[" + i + "]";
            if (!item.isJsonPrimitive() || !item.getAsJsonPrimitive().isString()) {
                throw owner.fail(where, "must be a string");
            }
            owner.checkString(where, item.getAsString(), 0, maxLength, null);
        }
    }
}
