package dev.mineclaw.testkit;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.gamefacts.GameRegistry;
import dev.mineclaw.core.gamefacts.ItemTypeFacts;
import dev.mineclaw.core.gamefacts.RecipeFacts;
import dev.mineclaw.core.gamefacts.RegistryFacts;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stand-in server's item and recipe registries: a few vanilla items, tags and recipes (the
 * beacon's among them), to which {@code recipe.add} adds a plugin's or datapack's recipe and
 * {@code registry.reload} changes the stamp, as a datapack reload does. Read on the global
 * thread only, as Folia requires (the thread rules check it).
 */
final class TestkitRegistry implements GameRegistry {
    private static final List<String> PLANKS = List.of("minecraft:oak_planks", "minecraft:spruce_planks",
            "minecraft:birch_planks");

    private final ThreadRules rules;
    private final AtomicLong stamp = new AtomicLong(1);
    private final List<RecipeFacts> added = new java.util.concurrent.CopyOnWriteArrayList<>();

    TestkitRegistry(ThreadRules rules) {
        this.rules = rules;
    }

    @Override
    public long stamp() {
        return this.stamp.get();
    }

    @Override
    public RegistryFacts read() {
        this.rules.requireGlobal("the recipe registry");
        List<RecipeFacts> recipes = new ArrayList<>(vanillaRecipes());
        recipes.addAll(this.added);
        return new RegistryFacts(items(), recipes, Map.of("minecraft:planks", Set.copyOf(PLANKS),
                "minecraft:beacon_base_blocks", Set.of("minecraft:iron_block", "minecraft:gold_block",
                        "minecraft:diamond_block", "minecraft:emerald_block", "minecraft:netherite_block")));
    }

    /** {@code registry.reload}: the registries may have changed (a datapack reload). */
    void reload() {
        this.stamp.incrementAndGet();
    }

    /** {@code recipe.add}: one recipe, in CONTROL.md's shape; the stamp changes as a reload's would. */
    void add(JsonObject op) {
        String key = field(op, "key");
        String kindName = field(op, "kind");
        RecipeFacts.Kind kind;
        try {
            kind = RecipeFacts.Kind.valueOf(kindName.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException exc) {
            throw new BadCommand("recipe.add: unknown kind '" + kindName + "'");
        }
        String result = optional(op, "result");
        int count = (int) number(op, "count", 1);
        List<String> shape = op.has("shape") ? strings(op, "shape") : List.of();
        List<RecipeFacts.Ingredient> ingredients = new ArrayList<>();
        if (op.has("ingredients")) {
            JsonElement given = op.get("ingredients");
            if (!given.isJsonArray()) {
                throw new BadCommand("recipe.add: ingredients must be an array");
            }
            JsonArray list = given.getAsJsonArray();
            for (int i = 0; i < list.size(); i++) {
                if (!list.get(i).isJsonObject()) {
                    throw new BadCommand("recipe.add: ingredients[" + i + "] must be an object");
                }
                JsonObject ingredient = list.get(i).getAsJsonObject();
                ingredients.add(new RecipeFacts.Ingredient(optional(ingredient, "slot"),
                        strings(ingredient, "items")));
            }
        }
        int cookTicks = (int) number(op, "cook_ticks", -1);
        double experience = number(op, "experience", 0);
        this.added.add(new RecipeFacts(key, kind, result, count, shape, ingredients, cookTicks, experience));
        reload();
    }

    private static List<ItemTypeFacts> items() {
        List<ItemTypeFacts> items = new ArrayList<>();
        for (String block : List.of("glass", "obsidian", "oak_log", "stone", "stone_slab", "iron_block",
                "gold_block", "diamond_block", "emerald_block", "netherite_block", "oak_planks", "spruce_planks",
                "birch_planks", "crafting_table")) {
            boolean fuel = block.endsWith("planks") || block.endsWith("log") || block.equals("crafting_table");
            items.add(new ItemTypeFacts("minecraft:" + block, 64, 0, false, fuel, true, "COMMON"));
        }
        items.add(new ItemTypeFacts("minecraft:beacon", 64, 0, false, false, true, "RARE"));
        items.add(new ItemTypeFacts("minecraft:nether_star", 64, 0, false, false, false, "UNCOMMON"));
        items.add(new ItemTypeFacts("minecraft:stick", 64, 0, false, true, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:raw_iron", 64, 0, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:iron_ingot", 64, 0, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:diamond_sword", 1, 1561, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:bread", 64, 0, true, false, false, "COMMON"));
        return items;
    }

    private static List<RecipeFacts> vanillaRecipes() {
        return List.of(
                RecipeFacts.shaped("minecraft:beacon", "minecraft:beacon", 1, List.of("GGG", "GSG", "OOO"), List.of(
                        new RecipeFacts.Ingredient("G", List.of("minecraft:glass")),
                        new RecipeFacts.Ingredient("S", List.of("minecraft:nether_star")),
                        new RecipeFacts.Ingredient("O", List.of("minecraft:obsidian")))),
                RecipeFacts.shaped("minecraft:stick", "minecraft:stick", 4, List.of("#", "#"),
                        List.of(new RecipeFacts.Ingredient("#", PLANKS))),
                RecipeFacts.shaped("minecraft:crafting_table", "minecraft:crafting_table", 1, List.of("##", "##"),
                        List.of(new RecipeFacts.Ingredient("#", PLANKS))),
                RecipeFacts.shapeless("minecraft:oak_planks", "minecraft:oak_planks", 4,
                        List.of(List.of("minecraft:oak_log"))),
                RecipeFacts.single("minecraft:iron_ingot_from_smelting_raw_iron", RecipeFacts.Kind.SMELTING,
                        "minecraft:iron_ingot", 1, List.of("minecraft:raw_iron"), 200, 0.7),
                RecipeFacts.single("minecraft:stone_slab_from_stonecutting", RecipeFacts.Kind.STONECUTTING,
                        "minecraft:stone_slab", 2, List.of("minecraft:stone"), 0, 0));
    }

    private static double number(JsonObject object, String name, double absent) {
        JsonElement value = object.get(name);
        if (value == null) {
            return absent;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
            throw new BadCommand("recipe.add: " + name + " must be a number");
        }
        return value.getAsDouble();
    }

    private static String field(JsonObject object, String name) {
        String value = optional(object, name);
        if (value == null) {
            throw new BadCommand("recipe.add: " + name + " is required");
        }
        return value;
    }

    private static String optional(JsonObject object, String name) {
        JsonElement value = object.get(name);
        if (value == null || value.isJsonNull()) {
            return null;
        }
        if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw new BadCommand("recipe.add: " + name + " must be a string");
        }
        return value.getAsString();
    }

    private static List<String> strings(JsonObject object, String name) {
        JsonElement value = object.get(name);
        if (value == null || !value.isJsonArray()) {
            throw new BadCommand("recipe.add: " + name + " must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonElement element : value.getAsJsonArray()) {
            if (!element.isJsonPrimitive() || !element.getAsJsonPrimitive().isString()) {
                throw new BadCommand("recipe.add: " + name + " must be an array of strings");
            }
            out.add(element.getAsString());
        }
        return out;
    }
}
