package dev.mineclaw.core.gamefacts;

import com.google.gson.JsonObject;
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
 * Both give the same answer (checked for every query before timing): the same name resolution
 * and the same projection; only the finding of the recipes differs (a map lookup in the index,
 * every recipe looked at in the scan). Prints one JSON line: microseconds per lookup for each,
 * the index's build time (paid once per registry change) and the ratio. It lives in the core's
 * package (in the testkit jar, which holds the core) to reach the pieces the scan shares.
 *
 * <p>Run: {@code java -cp mineclaw-testkit.jar dev.mineclaw.core.gamefacts.FactsBench [lookups] [rounds]}.
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
        GameIndex checked = GameIndex.of(facts);
        for (int i = 0; i < queries.size() * 2; i++) {
            JsonObject indexed = FactsProjection.recipes(checked, queries.get(i % queries.size()), i >= queries.size(),
                    4, 6000);
            JsonObject scanned = scan(checked, facts, queries.get(i % queries.size()), i >= queries.size(), 4, 6000);
            if (!indexed.equals(scanned)) {
                throw new IllegalStateException("the scan and the index disagree on " + queries.get(i % queries.size()));
            }
        }
        JsonObject result = new JsonObject();
        result.addProperty("recipes", facts.recipes().size());
        result.addProperty("items", facts.items().size());
        result.addProperty("tags", facts.itemTags().size());
        result.addProperty("lookups", lookups);
        result.addProperty("rounds", rounds);
        List<Double> builds = new ArrayList<>();
        for (int round = 0; round < rounds + 1; round++) {
            long start = System.nanoTime();
            GameIndex.of(facts);
            if (round > 0) { // the first round warms the JIT up
                builds.add((System.nanoTime() - start) / 1e3);
            }
        }
        result.addProperty("build_us", Math.round(median(builds)));
        GameIndex index = GameIndex.of(facts);
        for (Map.Entry<String, List<String>> mix : Map.of("all", queries,
                "named", queries.stream().filter(q -> !q.contains("x_")).toList(),
                "near_miss", queries.stream().filter(q -> q.contains("x_")).toList()).entrySet()) {
            List<Double> indexed = new ArrayList<>();
            List<Double> scanned = new ArrayList<>();
            long sink = 0;
            for (int round = 0; round < rounds + 1; round++) {
                List<String> asked = mix.getValue();
                long start = System.nanoTime();
                for (int i = 0; i < lookups; i++) {
                    sink += FactsProjection.recipes(index, asked.get(i % asked.size()), (i & 7) == 7, 4, 6000)
                            .get("total").getAsInt();
                }
                long lookedUp = System.nanoTime();
                for (int i = 0; i < lookups; i++) {
                    sink -= scan(index, facts, asked.get(i % asked.size()), (i & 7) == 7, 4, 6000)
                            .get("total").getAsInt();
                }
                long done = System.nanoTime();
                if (round > 0) {
                    indexed.add((lookedUp - start) / 1e3 / lookups);
                    scanned.add((done - lookedUp) / 1e3 / lookups);
                }
            }
            if (sink != 0) {
                throw new IllegalStateException("the scan and the index found different totals");
            }
            JsonObject figures = new JsonObject();
            figures.addProperty("indexed_us", Math.round(median(indexed) * 100) / 100.0);
            figures.addProperty("scan_us", Math.round(median(scanned) * 100) / 100.0);
            figures.addProperty("scan_over_indexed", Math.round(median(scanned) / median(indexed) * 100) / 100.0);
            result.add(mix.getKey(), figures);
        }
        System.out.println(result);
    }

    /**
     * The same answer found without the index's maps: the name resolved alike, then every recipe
     * of the registry looked at, the matches put in the same order and projected alike.
     */
    static JsonObject scan(GameIndex names, RegistryFacts facts, String query, boolean uses, int limit, int maxChars) {
        NameResolver.Resolution resolution = names.resolve(query);
        List<RecipeFacts> found = new ArrayList<>();
        if (resolution.match() == NameResolver.Match.EXACT) {
            String item = resolution.item();
            for (RecipeFacts recipe : facts.recipes()) {
                if (uses ? takes(recipe, item) : item.equals(recipe.resultItem())) {
                    found.add(recipe);
                }
            }
            found.sort(GameIndex.ORDER);
        }
        return FactsProjection.answer(names, resolution, found, limit, maxChars);
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
