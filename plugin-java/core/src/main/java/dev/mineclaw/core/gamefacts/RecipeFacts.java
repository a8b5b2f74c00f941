package dev.mineclaw.core.gamefacts;

import java.util.List;

/**
 * One recipe as the server's registry holds it, read by a platform without judgement: keys as the
 * server spells them, every alternative of an ingredient listed item by item (a tag arrives
 * expanded, as Bukkit hands it out). The core names tags, bounds and orders; see {@link GameIndex}.
 *
 * @param key the recipe's namespaced key ({@code minecraft:beacon}, {@code myplugin:super_pick})
 * @param kind what station makes it
 * @param resultItem the item type it makes, or null when it makes none of its own (a trim)
 * @param resultCount how many
 * @param shape the rows of a shaped recipe as the server spells them (any character names an
 *     ingredient, a space is an empty cell); empty for every other kind
 * @param ingredients the inputs; for a shaped recipe {@code slot} is the shape's character
 * @param cookTicks the cooking time of a furnace-like recipe, -1 otherwise
 * @param experience the experience a furnace-like recipe gives, 0 otherwise
 */
public record RecipeFacts(String key, Kind kind, String resultItem, int resultCount, List<String> shape,
        List<Ingredient> ingredients, int cookTicks, double experience) {
    public RecipeFacts {
        shape = List.copyOf(shape);
        ingredients = List.copyOf(ingredients);
    }

    /** The stations the protocol names; {@code OTHER} is a special recipe (map cloning, dyeing armour). */
    public enum Kind {
        SHAPED, SHAPELESS, SMELTING, BLASTING, SMOKING, CAMPFIRE, STONECUTTING, SMITHING_TRANSFORM,
        SMITHING_TRIM, OTHER;

        /** The protocol's name. */
        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        boolean cooks() {
            return this == SMELTING || this == BLASTING || this == SMOKING || this == CAMPFIRE;
        }
    }

    /**
     * One input: where it goes and every item type that may fill it.
     *
     * @param slot the shape character of a shaped recipe; {@code template}, {@code base} or
     *     {@code addition} for smithing; anything (ignored) for the rest
     * @param items the item keys accepted there, in the server's order
     */
    public record Ingredient(String slot, List<String> items) {
        public Ingredient {
            items = List.copyOf(items);
        }
    }

    /** A shaped recipe. */
    public static RecipeFacts shaped(String key, String result, int count, List<String> shape, List<Ingredient> keyed) {
        return new RecipeFacts(key, Kind.SHAPED, result, count, shape, keyed, -1, 0);
    }

    /** A shapeless recipe. */
    public static RecipeFacts shapeless(String key, String result, int count, List<List<String>> inputs) {
        return new RecipeFacts(key, Kind.SHAPELESS, result, count, List.of(),
                inputs.stream().map(items -> new Ingredient("", items)).toList(), -1, 0);
    }

    /** A furnace-like or stonecutting recipe with one input. */
    public static RecipeFacts single(String key, Kind kind, String result, int count, List<String> input,
            int cookTicks, double experience) {
        return new RecipeFacts(key, kind, result, count, List.of(), List.of(new Ingredient("input", input)),
                kind.cooks() ? cookTicks : -1, kind.cooks() ? experience : 0);
    }

    /** A smithing recipe: template, base and addition; {@code result} null for a trim. */
    public static RecipeFacts smithing(String key, Kind kind, String result, List<String> template, List<String> base,
            List<String> addition) {
        return new RecipeFacts(key, kind, result, result == null ? 0 : 1, List.of(),
                List.of(new Ingredient("template", template), new Ingredient("base", base),
                        new Ingredient("addition", addition)), -1, 0);
    }
}
