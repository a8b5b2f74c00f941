package dev.mineclaw.core.gamefacts;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A small registry shaped like vanilla's, with one plugin recipe, and a counting {@link GameRegistry} over it. */
class VanillaSample implements GameRegistry {
    static final List<String> PLANKS = List.of("minecraft:oak_planks", "minecraft:birch_planks",
            "minecraft:spruce_planks");

    final AtomicLong stamp = new AtomicLong(1);
    final AtomicInteger reads = new AtomicInteger();
    final List<String> readThreads = new java.util.concurrent.CopyOnWriteArrayList<>();
    volatile RegistryFacts facts = facts(List.of());

    static RegistryFacts facts(List<RecipeFacts> extra) {
        List<ItemTypeFacts> items = new ArrayList<>();
        for (String key : List.of("minecraft:glass", "minecraft:obsidian", "minecraft:oak_log", "minecraft:stone",
                "minecraft:stone_slab", "minecraft:stone_bricks")) {
            items.add(new ItemTypeFacts(key, 64, 0, false, false, true, "COMMON"));
        }
        PLANKS.forEach(key -> items.add(new ItemTypeFacts(key, 64, 0, false, true, true, "COMMON")));
        items.add(new ItemTypeFacts("minecraft:beacon", 64, 0, false, false, true, "RARE"));
        items.add(new ItemTypeFacts("minecraft:nether_star", 64, 0, false, false, false, "UNCOMMON"));
        items.add(new ItemTypeFacts("minecraft:stick", 64, 0, false, true, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:raw_iron", 64, 0, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:iron_ingot", 64, 0, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:diamond_sword", 1, 1561, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:netherite_sword", 1, 2031, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:netherite_ingot", 64, 0, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:netherite_upgrade_smithing_template", 64, 0, false, false, false,
                "UNCOMMON"));
        items.add(new ItemTypeFacts("minecraft:coast_armor_trim_smithing_template", 64, 0, false, false, false,
                "UNCOMMON"));
        items.add(new ItemTypeFacts("minecraft:iron_chestplate", 1, 240, false, false, false, "COMMON"));
        items.add(new ItemTypeFacts("minecraft:bread", 64, 0, true, false, false, "COMMON"));
        List<RecipeFacts> recipes = new ArrayList<>(List.of(
                RecipeFacts.shaped("minecraft:beacon", "minecraft:beacon", 1, List.of("GGG", "GSG", "OOO"), List.of(
                        new RecipeFacts.Ingredient("G", List.of("minecraft:glass")),
                        new RecipeFacts.Ingredient("S", List.of("minecraft:nether_star")),
                        new RecipeFacts.Ingredient("O", List.of("minecraft:obsidian")))),
                RecipeFacts.shaped("minecraft:stick", "minecraft:stick", 4, List.of("#", "#"),
                        List.of(new RecipeFacts.Ingredient("#", PLANKS))),
                RecipeFacts.shapeless("minecraft:oak_planks", "minecraft:oak_planks", 4,
                        List.of(List.of("minecraft:oak_log"))),
                RecipeFacts.single("minecraft:iron_ingot_from_smelting_raw_iron", RecipeFacts.Kind.SMELTING,
                        "minecraft:iron_ingot", 1, List.of("minecraft:raw_iron"), 200, 0.7),
                RecipeFacts.single("minecraft:iron_ingot_from_blasting_raw_iron", RecipeFacts.Kind.BLASTING,
                        "minecraft:iron_ingot", 1, List.of("minecraft:raw_iron"), 100, 0.7),
                RecipeFacts.single("minecraft:stone_slab_from_stonecutting", RecipeFacts.Kind.STONECUTTING,
                        "minecraft:stone_slab", 2, List.of("minecraft:stone"), 0, 0),
                RecipeFacts.smithing("minecraft:netherite_sword_smithing", RecipeFacts.Kind.SMITHING_TRANSFORM,
                        "minecraft:netherite_sword", List.of("minecraft:netherite_upgrade_smithing_template"),
                        List.of("minecraft:diamond_sword"), List.of("minecraft:netherite_ingot")),
                RecipeFacts.smithing("minecraft:coast_armor_trim_smithing_template_smithing_trim",
                        RecipeFacts.Kind.SMITHING_TRIM, null, List.of("minecraft:coast_armor_trim_smithing_template"),
                        List.of("minecraft:iron_chestplate"), List.of("minecraft:iron_ingot")),
                RecipeFacts.shapeless("myplugin:star_beacon", "minecraft:beacon", 1,
                        List.of(List.of("minecraft:nether_star"), List.of("minecraft:stone_bricks")))));
        recipes.addAll(extra);
        Map<String, Set<String>> tags = Map.of(
                "minecraft:planks", Set.copyOf(PLANKS),
                "minecraft:logs", Set.of("minecraft:oak_log"),
                "minecraft:beacon_payment_items", Set.of("minecraft:iron_ingot", "minecraft:netherite_ingot"),
                "minecraft:swords", Set.of("minecraft:diamond_sword", "minecraft:netherite_sword"));
        return new RegistryFacts(items, recipes, tags);
    }

    @Override
    public long stamp() {
        return this.stamp.get();
    }

    @Override
    public RegistryFacts read() {
        this.reads.incrementAndGet();
        this.readThreads.add(Thread.currentThread().getName());
        return this.facts;
    }
}
