package dev.mineclaw.core.gamefacts;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The answers of {@code facts.recipes} and {@code facts.item} (docs/protocol.md, "Game facts"),
 * projected from a {@link GameIndex} within the protocol's bounds.
 */
public final class FactsProjection {
    public static final int RECIPES_MAX = 32;
    public static final int OPTIONS_MAX = 8;
    public static final int INGREDIENTS_MAX = 9;
    public static final int TAGS_MAX = 32;
    public static final int COUNT_MAX = 127;
    public static final int STACK_MAX = 99;
    private static final Set<String> RARITIES = Set.of("common", "uncommon", "rare", "epic");
    private static final String LETTERS = "ABCDEFGHI";
    /** Serialized as the link sends it, so the budget counts what goes on the wire. */
    private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private FactsProjection() {}

    /**
     * The answer of {@code facts.recipes}: the recipes making ({@code uses} false) or using the
     * item the query names, at most {@code limit}, their compact JSON list at most
     * {@code maxChars} bytes of UTF-8. A query that is a recipe's own key (and no item's) answers
     * that recipe.
     */
    public static JsonObject recipes(GameIndex index, String query, boolean uses, int limit, int maxChars) {
        NameResolver.Resolution resolution = index.resolve(query);
        List<RecipeFacts> found = List.of();
        if (resolution.match() == NameResolver.Match.EXACT) {
            found = uses ? index.using(resolution.item()) : index.making(resolution.item());
        } else {
            RecipeFacts byKey = index.recipe(NameResolver.normalise(query));
            if (byKey != null && !uses) {
                found = List.of(byKey);
                String made = GameIndex.isKey(byKey.resultItem()) ? byKey.resultItem() : null;
                resolution = made == null ? resolution : NameResolver.Resolution.exact(made);
            }
        }
        return answer(index, resolution, found, limit, maxChars);
    }

    /** The answer listing {@code found} (in order) within {@code limit} and {@code maxChars}. */
    static JsonObject answer(GameIndex index, NameResolver.Resolution resolution, List<RecipeFacts> found, int limit,
            int maxChars) {
        JsonArray views = new JsonArray();
        int used = 2; // the brackets of the array
        int listed = 0;
        for (RecipeFacts recipe : found) {
            if (listed >= limit) {
                break;
            }
            JsonObject view = view(index, recipe);
            int size = COMPACT.toJson(view).getBytes(StandardCharsets.UTF_8).length + (views.isEmpty() ? 0 : 1);
            if (used + size > maxChars) {
                break;
            }
            views.add(view);
            used += size;
            listed++;
        }
        JsonObject answer = new JsonObject();
        answer.add("query", query(resolution));
        answer.add("recipes", views);
        answer.addProperty("total", found.size());
        answer.addProperty("truncated", listed < found.size());
        return answer;
    }

    /** The answer of {@code facts.item}: what the server says about the item the query names. */
    public static JsonObject item(GameIndex index, String query) {
        NameResolver.Resolution resolution = index.resolve(query);
        JsonObject answer = new JsonObject();
        answer.add("query", query(resolution));
        ItemTypeFacts facts = resolution.match() == NameResolver.Match.EXACT ? index.item(resolution.item()) : null;
        if (facts == null && resolution.match() == NameResolver.Match.EXACT) {
            // Known only as a recipe's result (the server listed no such item type): the key, and little else.
            facts = new ItemTypeFacts(resolution.item(), 64, 0, false, false, false, null);
        }
        answer.add("facts", facts == null ? JsonNull.INSTANCE : itemView(index, facts));
        return answer;
    }

    private static JsonObject query(NameResolver.Resolution resolution) {
        JsonObject query = new JsonObject();
        query.addProperty("match", resolution.match().wire());
        if (resolution.item() == null) {
            query.add("item", JsonNull.INSTANCE);
        } else {
            query.addProperty("item", resolution.item());
        }
        JsonArray suggestions = new JsonArray();
        resolution.suggestions().stream().limit(NameResolver.SUGGESTIONS_MAX).forEach(suggestions::add);
        query.add("suggestions", suggestions);
        return query;
    }

    private static JsonObject itemView(GameIndex index, ItemTypeFacts facts) {
        JsonObject view = new JsonObject();
        view.addProperty("key", facts.key());
        view.addProperty("max_stack", Math.max(1, Math.min(STACK_MAX, facts.maxStack())));
        view.addProperty("durability", Math.max(0, facts.durability()));
        view.addProperty("edible", facts.edible());
        view.addProperty("fuel", facts.fuel());
        view.addProperty("block", facts.block());
        String rarity = facts.rarity() == null ? null : facts.rarity().toLowerCase(Locale.ROOT);
        if (rarity == null || !RARITIES.contains(rarity)) {
            view.add("rarity", JsonNull.INSTANCE);
        } else {
            view.addProperty("rarity", rarity);
        }
        List<String> tags = index.tagsOf(facts.key());
        JsonArray listed = new JsonArray();
        tags.stream().limit(TAGS_MAX).forEach(listed::add);
        view.add("tags", listed);
        view.addProperty("more_tags", Math.max(0, tags.size() - TAGS_MAX));
        view.addProperty("recipes_making", index.making(facts.key()).size());
        view.addProperty("recipes_using", index.using(facts.key()).size());
        return view;
    }

    /** One RecipeView. */
    static JsonObject view(GameIndex index, RecipeFacts recipe) {
        JsonObject view = new JsonObject();
        view.addProperty("key", recipe.key());
        view.addProperty("kind", recipe.kind().wire());
        if (GameIndex.isKey(recipe.resultItem())) {
            JsonObject result = new JsonObject();
            result.addProperty("item", recipe.resultItem());
            result.addProperty("count", Math.max(1, Math.min(COUNT_MAX, recipe.resultCount())));
            view.add("result", result);
        } else {
            view.add("result", JsonNull.INSTANCE);
        }
        JsonArray ingredients = new JsonArray();
        if (recipe.kind() == RecipeFacts.Kind.SHAPED) {
            view.add("pattern", shaped(index, recipe, ingredients));
        } else {
            view.add("pattern", JsonNull.INSTANCE);
            int number = 0;
            for (RecipeFacts.Ingredient ingredient : recipe.ingredients()) {
                String slot = switch (recipe.kind()) {
                    case SMITHING_TRANSFORM, SMITHING_TRIM -> ingredient.slot();
                    case SHAPELESS, OTHER -> Integer.toString(number + 1);
                    default -> "input";
                };
                if (ingredients.size() < INGREDIENTS_MAX && slotName(slot)
                        && add(index, ingredients, slot, ingredient.items())) {
                    number++;
                }
            }
        }
        view.add("ingredients", ingredients);
        if (recipe.kind().cooks()) {
            view.addProperty("cook_ticks", Math.max(0, recipe.cookTicks()));
            double experience = Double.isFinite(recipe.experience()) ? Math.max(0, Math.min(1e9, recipe.experience())) : 0;
            view.addProperty("experience", Math.round(experience * 100) / 100.0);
        } else {
            view.add("cook_ticks", JsonNull.INSTANCE);
            view.add("experience", JsonNull.INSTANCE);
        }
        return view;
    }

    /**
     * The shape with one letter per distinct ingredient, {@code A}..{@code I} in reading order (an
     * empty cell, or one whose character names no ingredient, is a space), at most three rows of
     * three; the ingredients of those letters are added to {@code ingredients}. Cells are grouped
     * by what they accept, not by their character: a server hands vanilla recipes out with one
     * character per cell ({@code abc/def/ghi}), which would hide that the beacon is five glass.
     */
    private static JsonArray shaped(GameIndex index, RecipeFacts recipe, JsonArray ingredients) {
        Map<Character, List<String>> byChar = new LinkedHashMap<>();
        for (RecipeFacts.Ingredient ingredient : recipe.ingredients()) {
            if (ingredient.slot() != null && ingredient.slot().length() == 1) {
                byChar.putIfAbsent(ingredient.slot().charAt(0), ingredient.items());
            }
        }
        Map<List<String>, Character> letters = new LinkedHashMap<>();
        List<String> rows = new ArrayList<>();
        for (String row : recipe.shape().stream().limit(3).toList()) {
            StringBuilder renamed = new StringBuilder(3);
            for (int i = 0; i < Math.min(3, row.length()); i++) {
                List<String> items = byChar.get(row.charAt(i));
                List<String> names = items == null ? List.of() : index.choiceNames(items);
                Character letter = names.isEmpty() ? null : letters.get(names);
                if (letter == null && !names.isEmpty()) {
                    letter = LETTERS.charAt(letters.size());
                    letters.put(names, letter);
                    add(index, ingredients, letter.toString(), items);
                }
                renamed.append(letter == null ? ' ' : letter);
            }
            rows.add(renamed.isEmpty() ? " " : renamed.toString());
        }
        JsonArray pattern = new JsonArray();
        rows.forEach(pattern::add);
        return pattern;
    }

    private static boolean slotName(String slot) {
        return slot != null && slot.matches("[1-9]|input|template|base|addition");
    }

    /** Adds one Ingredient; false (nothing added) when no alternative has a key's shape. */
    private static boolean add(GameIndex index, JsonArray ingredients, String slot, List<String> items) {
        List<String> names = index.choiceNames(items);
        if (names.isEmpty()) {
            return false;
        }
        JsonObject ingredient = new JsonObject();
        ingredient.addProperty("slot", slot);
        JsonArray options = new JsonArray();
        names.stream().limit(OPTIONS_MAX).forEach(options::add);
        ingredient.add("options", options);
        ingredient.addProperty("more", Math.max(0, names.size() - OPTIONS_MAX));
        ingredients.add(ingredient);
        return true;
    }
}
