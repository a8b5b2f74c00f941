package dev.mineclaw.testkit;

import com.google.gson.JsonObject;
import dev.mineclaw.core.gamefacts.FactsProjection;
import dev.mineclaw.core.gamefacts.GameIndex;
import dev.mineclaw.core.gamefacts.ItemTypeFacts;
import dev.mineclaw.core.gamefacts.RecipeFacts;
import dev.mineclaw.core.gamefacts.RegistryFacts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The plugin side of {@code bench/game_facts_bench.py}: {@code facts.recipes} lookups over a
 * registry the size of vanilla's (about 1,400 item types, 1,500 recipes, 75 item tags) through
 * the core's index, against a plain scan of the recipe list for each lookup, in the same run.
 * The scan is the floor of doing without an index: exact keys only (no name resolution, no near
 * misses) and no projection, so it does less work per lookup than the index does. Prints one JSON
 * line: microseconds per lookup for each, the index's build time (paid once per registry change)
 * and the ratio.
 *
 * <p>Run: {@code java -cp mineclaw-testkit.jar dev.mineclaw.testkit.FactsBench [lookups] [rounds]}.
 */
public final class FactsBench {
    private static final List<String> MATERIALS = List.of("oak", "spruce", "birch", "jungle", "acacia", "dark_oak",
            "mangrove", "cherry", "bamboo", "crimson", "warped", "stone", "cobblestone", "mossy_cobblestone",
            "sandstone", "red_sandstone", "brick", "nether_brick", "quartz", "prismarine", "purpur", "blackstone",
            "deepslate", "tuff", "copper", "iron", "gold", "diamond", "netherite", "emerald", "lapis", "redstone",
            "white", "orange", "magenta", "light_blue", "yellow", "lime", "pink", "gray");
    private static final List<String> FORMS = List.of("planks", "slab", "stairs", "wall", "fence", "fence_gate", "door",
            "trapdoor", "button", "pressure_plate", "sign", "block", "bricks", "tiles", "pillar", "wool", "carpet",
            "bed", "banner", "candle", "concrete", "concrete_powder", "terracotta", "glazed_terracotta",
            "stained_glass", "stained_glass_pane", "shulker_box", "sword", "pickaxe", "axe", "shovel", "hoe",
            "helmet", "chestplate", "leggings");

    private FactsBench() {}

    public static void main(String[] args) {
        int lookups = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        RegistryFacts facts = vanillaSized();
        List<String> queries = queries();
        List<Double> indexed = new ArrayList<>();
        List<Double> scanned = new ArrayList<>();
        List<Double> builds = new ArrayList<>();
        long sink = 0;
        for (int round = 0; round < rounds + 1; round++) { // the first round warms the JIT up
            long start = System.nanoTime();
            GameIndex index = GameIndex.of(facts);
            long built = System.nanoTime();
            for (int i = 0; i < lookups; i++) {
                String query = queries.get(i % queries.size());
                JsonObject answer = FactsProjection.recipes(index, query, (i & 7) == 7, 4, 6000);
                sink += answer.get("total").getAsInt();
            }
            long lookedUp = System.nanoTime();
            for (int i = 0; i < lookups; i++) {
                String query = queries.get(i % queries.size());
                sink += scan(facts, query, (i & 7) == 7, 4).size();
            }
            long done = System.nanoTime();
            if (round > 0) {
                builds.add((built - start) / 1e3);
                indexed.add((lookedUp - built) / 1e3 / lookups);
                scanned.add((done - lookedUp) / 1e3 / lookups);
            }
        }
        double index = median(indexed);
        double scan = median(scanned);
        System.out.printf(Locale.ROOT, "{\"recipes\":%d,\"items\":%d,\"tags\":%d,\"lookups\":%d,\"rounds\":%d,"
                        + "\"indexed_us\":%.2f,\"scan_us\":%.2f,\"build_us\":%.0f,\"scan_over_indexed\":%.2f,"
                        + "\"sink\":%d}%n", facts.recipes().size(), facts.items().size(), facts.itemTags().size(),
                lookups, rounds, index, scan, median(builds), scan / index, sink);
    }

    /** The floor: every recipe looked at for every lookup, exact keys only, nothing projected. */
    static List<RecipeFacts> scan(RegistryFacts facts, String query, boolean uses, int limit) {
        String key = query.strip().toLowerCase(Locale.ROOT).replace(' ', '_');
        key = key.contains(":") ? key : "minecraft:" + key;
        List<RecipeFacts> found = new ArrayList<>();
        for (RecipeFacts recipe : facts.recipes()) {
            boolean hit = uses ? takes(recipe, key) : key.equals(recipe.resultItem());
            if (hit && found.size() < limit) {
                found.add(recipe);
            }
        }
        return found;
    }

    private static boolean takes(RecipeFacts recipe, String key) {
        for (RecipeFacts.Ingredient ingredient : recipe.ingredients()) {
            if (ingredient.items().contains(key)) {
                return true;
            }
        }
        return false;
    }

    /** Names as players write them: exact keys, spaced names, plurals and near misses. */
    static List<String> queries() {
        List<String> queries = new ArrayList<>();
        for (int i = 0; i < MATERIALS.size(); i++) {
            String material = MATERIALS.get(i);
            String form = FORMS.get(i % FORMS.size());
            queries.add(material + " " + form.replace('_', ' '));
            queries.add("minecraft:" + material + "_" + form);
            queries.add(material + "_" + form + "s");
            queries.add(material.substring(0, material.length() - 1) + "x_" + form); // a near miss
        }
        queries.add("stick");
        return queries;
    }

    /** About vanilla's size: 1,400 item types, 1,500 recipes (crafting, smelting, stonecutting), 75 tags. */
    static RegistryFacts vanillaSized() {
        List<ItemTypeFacts> items = new ArrayList<>();
        List<RecipeFacts> recipes = new ArrayList<>();
        Map<String, Set<String>> tags = new HashMap<>();
        items.add(new ItemTypeFacts("minecraft:stick", 64, 0, false, true, false, "COMMON"));
        for (String material : MATERIALS) {
            String base = "minecraft:" + material + "_block";
            for (String form : FORMS) {
                String key = "minecraft:" + material + "_" + form;
                items.add(new ItemTypeFacts(key, 64, 0, false, false, true, "COMMON"));
                tags.computeIfAbsent("minecraft:" + form + "s", tag -> new HashSet<>()).add(key);
                tags.computeIfAbsent("minecraft:" + material + "_things", tag -> new HashSet<>()).add(key);
                if (!key.equals(base)) {
                    recipes.add(RecipeFacts.shaped(key, key, 4, List.of("XX ", "XS ", "XX "), List.of(
                            new RecipeFacts.Ingredient("X", List.of(base)),
                            new RecipeFacts.Ingredient("S", List.of("minecraft:stick")))));
                }
            }
            recipes.add(RecipeFacts.single("minecraft:" + material + "_block_from_smelting", RecipeFacts.Kind.SMELTING,
                    base, 1, List.of("minecraft:" + material + "_planks"), 200, 0.1));
        }
        for (int n = 0; recipes.size() < 1500; n++) {
            String material = MATERIALS.get(n % MATERIALS.size());
            String form = FORMS.get(n % FORMS.size());
            String key = "minecraft:" + material + "_" + form;
            recipes.add(RecipeFacts.single(key + "_from_stonecutting_" + n, RecipeFacts.Kind.STONECUTTING, key, 2,
                    List.of("minecraft:" + material + "_block"), -1, 0));
        }
        return new RegistryFacts(items, recipes, tags);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }
}
