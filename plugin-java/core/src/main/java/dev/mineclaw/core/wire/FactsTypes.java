package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The message types of minor version 1.3, game facts: {@code facts.recipes} and
 * {@code facts.item}, requests from the bridge (docs/protocol.md, "Game facts").
 */
final class FactsTypes {
    static final Pattern OPTION = Pattern.compile("#?[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}");
    static final Pattern PATTERN_ROW = Pattern.compile("[A-I ]{1,3}");
    static final Pattern SLOT = Pattern.compile("[A-I]|[1-9]|input|template|base|addition");
    static final Set<String> KINDS = Set.of("shaped", "shapeless", "smelting", "blasting", "smoking", "campfire",
            "stonecutting", "smithing_transform", "smithing_trim", "other");
    static final int QUERY_MAX = 128;
    static final int RECIPES_MAX = 32;
    static final int SUGGESTIONS_MAX = 8;
    static final int INGREDIENTS_MAX = 9;
    static final int OPTIONS_MAX = 8;
    static final int TAGS_MAX = 32;
    private static final int KEY_MAX = 256;
    private static final long INT_MAX = Integer.MAX_VALUE;

    private FactsTypes() {}

    static void register() {
        Direction toPlugin = Direction.BRIDGE_TO_PLUGIN;
        MessageTypes.request(toPlugin, "facts.recipes", data -> {
            Set<String> fields = Set.of("item", "direction", "limit", "max_chars");
            data.only(fields, fields);
            data.string("item", 1, QUERY_MAX, null);
            data.oneOf("direction", Set.of("makes", "uses"));
            data.integer("limit", 1, RECIPES_MAX);
            data.integer("max_chars", 256, 16384);
        }, data -> {
            Set<String> fields = Set.of("query", "recipes", "total", "truncated");
            data.only(fields, fields);
            query(data.object("query"));
            JsonArray recipes = data.array("recipes", RECIPES_MAX);
            for (int i = 0; i < recipes.size(); i++) {
                recipe(Fields.of(recipes.get(i), data.name("recipes[" + i + "]"), ErrorCode.INVALID_DATA));
            }
            data.integer("total", 0, INT_MAX);
            data.bool("truncated");
        });
        MessageTypes.request(toPlugin, "facts.item", data -> {
            data.only(Set.of("item"), Set.of("item"));
            data.string("item", 1, QUERY_MAX, null);
        }, data -> {
            data.only(Set.of("query", "facts"), Set.of("query", "facts"));
            String match = query(data.object("query"));
            if (data.isNull("facts")) {
                if ("exact".equals(match)) {
                    throw data.fail("facts", "is required when the match is 'exact'");
                }
                return;
            }
            if (!"exact".equals(match)) {
                throw data.fail("facts", "must be null unless the match is 'exact'");
            }
            itemFacts(data.object("facts"));
        });
    }

    /** A Resolution; returns its match. */
    private static String query(Fields query) {
        query.only(Set.of("match", "item", "suggestions"), Set.of("match", "item", "suggestions"));
        String match = query.oneOf("match", Set.of("exact", "near", "none"));
        if ("exact".equals(match)) {
            if (query.isNull("item")) {
                throw query.fail("item", "is required when the match is 'exact'");
            }
            query.string("item", 3, KEY_MAX, ToolTypes.NAMESPACED_KEY);
        } else if (!query.isNull("item")) {
            throw query.fail("item", "must be null unless the match is 'exact'");
        }
        JsonArray suggestions = query.array("suggestions", SUGGESTIONS_MAX);
        for (int i = 0; i < suggestions.size(); i++) {
            key(query, "suggestions[" + i + "]", suggestions.get(i), ToolTypes.NAMESPACED_KEY);
        }
        if ("near".equals(match) && suggestions.isEmpty()) {
            throw query.fail("suggestions", "must name at least one key when the match is 'near'");
        }
        if (!"near".equals(match) && !suggestions.isEmpty()) {
            throw query.fail("suggestions", "must be empty unless the match is 'near'");
        }
        return match;
    }

    private static void key(Fields parent, String where, com.google.gson.JsonElement value, Pattern pattern) {
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw parent.fail(where, "must be a string");
        }
        parent.checkString(where, value.getAsString(), 1, KEY_MAX + 1, pattern);
    }

    private static void recipe(Fields recipe) {
        Set<String> fields = Set.of("key", "kind", "result", "pattern", "ingredients", "cook_ticks", "experience");
        recipe.only(fields, fields);
        recipe.string("key", 3, KEY_MAX, ToolTypes.NAMESPACED_KEY);
        String kind = recipe.oneOf("kind", KINDS);
        if (!recipe.isNull("result")) {
            Fields result = recipe.object("result");
            result.only(Set.of("item", "count"), Set.of("item", "count"));
            result.string("item", 3, KEY_MAX, ToolTypes.NAMESPACED_KEY);
            result.integer("count", 1, 127);
        }
        if ("shaped".equals(kind) == recipe.isNull("pattern")) {
            throw recipe.fail("pattern", "shaped".equals(kind) ? "is required for a shaped recipe"
                    : "must be null unless the recipe is shaped");
        }
        if (!recipe.isNull("pattern")) {
            JsonArray rows = recipe.array("pattern", 3);
            if (rows.isEmpty()) {
                throw recipe.fail("pattern", "must hold 1-3 rows");
            }
            for (int i = 0; i < rows.size(); i++) {
                key(recipe, "pattern[" + i + "]", rows.get(i), PATTERN_ROW);
            }
        }
        JsonArray ingredients = recipe.array("ingredients", INGREDIENTS_MAX);
        for (int i = 0; i < ingredients.size(); i++) {
            Fields ingredient = Fields.of(ingredients.get(i), recipe.name("ingredients[" + i + "]"),
                    ErrorCode.INVALID_DATA);
            ingredient.only(Set.of("slot", "options", "more"), Set.of("slot", "options", "more"));
            ingredient.string("slot", 1, 8, SLOT);
            JsonArray options = ingredient.array("options", OPTIONS_MAX);
            if (options.isEmpty()) {
                throw ingredient.fail("options", "must name at least one item or tag");
            }
            for (int j = 0; j < options.size(); j++) {
                key(ingredient, "options[" + j + "]", options.get(j), OPTION);
            }
            ingredient.integer("more", 0, INT_MAX);
        }
        boolean cooks = Set.of("smelting", "blasting", "smoking", "campfire").contains(kind);
        if (cooks == recipe.isNull("cook_ticks") || cooks == recipe.isNull("experience")) {
            throw recipe.fail(cooks ? "cook_ticks" : "experience", cooks ? "is required for a cooking recipe"
                    : "must be null unless the recipe cooks");
        }
        if (cooks) {
            recipe.integer("cook_ticks", 0, INT_MAX);
            recipe.number("experience", 0, ToolTypes.AMOUNT_MAX);
        }
    }

    private static void itemFacts(Fields facts) {
        Set<String> fields = Set.of("key", "max_stack", "durability", "edible", "fuel", "block", "rarity", "tags",
                "more_tags", "recipes_making", "recipes_using");
        facts.only(fields, fields);
        facts.string("key", 3, KEY_MAX, ToolTypes.NAMESPACED_KEY);
        facts.integer("max_stack", 1, 99);
        facts.integer("durability", 0, INT_MAX);
        facts.bool("edible");
        facts.bool("fuel");
        facts.bool("block");
        if (!facts.isNull("rarity")) {
            facts.oneOf("rarity", Set.of("common", "uncommon", "rare", "epic"));
        }
        JsonArray tags = facts.array("tags", TAGS_MAX);
        for (int i = 0; i < tags.size(); i++) {
            key(facts, "tags[" + i + "]", tags.get(i), ToolTypes.NAMESPACED_KEY);
        }
        facts.integer("more_tags", 0, INT_MAX);
        facts.integer("recipes_making", 0, INT_MAX);
        facts.integer("recipes_using", 0, INT_MAX);
    }
}
