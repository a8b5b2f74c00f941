package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.support.TestBridge;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.bukkit.Material;
import org.bukkit.NamespacedKey;
import org.bukkit.event.server.ServerLoadEvent;
import org.bukkit.inventory.FurnaceRecipe;
import org.bukkit.inventory.ItemStack;
import org.bukkit.inventory.RecipeChoice;
import org.bukkit.inventory.ShapedRecipe;
import org.bukkit.inventory.ShapelessRecipe;
import org.bukkit.inventory.SmithingTransformRecipe;
import org.bukkit.inventory.StonecuttingRecipe;
import org.junit.jupiter.api.Test;

/**
 * {@code facts.recipes} and {@code facts.item} over MockBukkit's real recipe registry: shaped,
 * shapeless, furnace, stonecutter and smithing recipes and a plugin's own, looked up by name, key
 * and near miss; the registry is read on the global region scheduler (Folia's; the server's
 * primary thread in MockBukkit), never on the link's thread, and read again after a reload.
 */
class GameFactsTest {
    /** Where the adapter read the registry from: whether each read of the plugin's recipe was on the primary thread. */
    private static final List<Boolean> READ_ON_PRIMARY = new CopyOnWriteArrayList<>();

    private static int ids = 100;

    private static JsonObject ask(PluginHarness harness, String item, String direction) throws Exception {
        JsonObject data = new JsonObject();
        data.addProperty("item", item);
        data.addProperty("direction", direction);
        data.addProperty("limit", 8);
        data.addProperty("max_chars", 8000);
        harness.bridge.latest().send(TestBridge.frame("b-" + ids++, "facts.recipes", null, data));
        return harness.next("facts.recipes.result").frame().getAsJsonObject("data");
    }

    private static List<String> keys(JsonObject answer) {
        List<String> keys = new ArrayList<>();
        answer.getAsJsonArray("recipes").forEach(r -> keys.add(r.getAsJsonObject().get("key").getAsString()));
        return keys;
    }

    /** The recipe of that key in an answer (MockBukkit also holds vanilla's own recipes). */
    private static JsonObject recipe(JsonObject answer, String key) {
        for (JsonElement recipe : answer.getAsJsonArray("recipes")) {
            if (key.equals(recipe.getAsJsonObject().get("key").getAsString())) {
                return recipe.getAsJsonObject();
            }
        }
        throw new AssertionError(key + " is not in " + keys(answer));
    }

    private static List<String> strings(JsonElement array) {
        List<String> out = new ArrayList<>();
        array.getAsJsonArray().forEach(element -> out.add(element.getAsString()));
        return out;
    }

    private static void register(PluginHarness harness) {
        ShapedRecipe beacon = new ShapedRecipe(NamespacedKey.minecraft("beacon"), new ItemStack(Material.BEACON));
        beacon.shape("GGG", "GSG", "OOO");
        beacon.setIngredient('G', Material.GLASS);
        beacon.setIngredient('S', Material.NETHER_STAR);
        beacon.setIngredient('O', Material.OBSIDIAN);
        harness.server.addRecipe(beacon);
        ShapelessRecipe planks = new ShapelessRecipe(NamespacedKey.minecraft("oak_planks"),
                new ItemStack(Material.OAK_PLANKS, 4));
        planks.addIngredient(Material.OAK_LOG);
        harness.server.addRecipe(planks);
        harness.server.addRecipe(new FurnaceRecipe(NamespacedKey.minecraft("iron_ingot_from_smelting_raw_iron"),
                new ItemStack(Material.IRON_INGOT), Material.RAW_IRON, 0.7f, 200));
        harness.server.addRecipe(new StonecuttingRecipe(NamespacedKey.minecraft("stone_slab_from_stone_stonecutting"),
                new ItemStack(Material.STONE_SLAB, 2), Material.STONE));
        harness.server.addRecipe(new SmithingTransformRecipe(NamespacedKey.minecraft("netherite_sword_smithing"),
                new ItemStack(Material.NETHERITE_SWORD),
                new RecipeChoice.MaterialChoice(Material.NETHERITE_UPGRADE_SMITHING_TEMPLATE),
                new RecipeChoice.MaterialChoice(Material.DIAMOND_SWORD),
                new RecipeChoice.MaterialChoice(Material.NETHERITE_INGOT)));
        // A plugin's recipe: its own namespace, and a subclass that notes the thread it is read on.
        ShapelessRecipe star = new ShapelessRecipe(new NamespacedKey("myplugin", "star_beacon"),
                new ItemStack(Material.BEACON, 2)) {
            @Override
            public ItemStack getResult() {
                READ_ON_PRIMARY.add(harness.server.isPrimaryThread());
                return super.getResult();
            }
        };
        star.addIngredient(Material.NETHER_STAR);
        star.addIngredient(new RecipeChoice.MaterialChoice(Material.GLASS, Material.TINTED_GLASS));
        harness.server.addRecipe(star);
    }

    @Test
    void recipesAreFoundByNameKeyAndNearMissFromTheServersRegistry() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            READ_ON_PRIMARY.clear();
            register(harness);
            JsonObject beacon = ask(harness, "Beacon", "makes");
            assertEquals("exact", beacon.getAsJsonObject("query").get("match").getAsString());
            assertEquals(List.of("minecraft:beacon", "myplugin:star_beacon"), keys(beacon));
            JsonObject shaped = beacon.getAsJsonArray("recipes").get(0).getAsJsonObject();
            assertEquals(List.of("AAA", "ABA", "CCC"), strings(shaped.get("pattern")), shaped.toString());
            JsonArray inputs = shaped.getAsJsonArray("ingredients");
            assertEquals(List.of("minecraft:glass"), strings(inputs.get(0).getAsJsonObject().get("options")));
            assertEquals(List.of("minecraft:nether_star"), strings(inputs.get(1).getAsJsonObject().get("options")));
            JsonObject plugin = beacon.getAsJsonArray("recipes").get(1).getAsJsonObject();
            assertEquals("shapeless", plugin.get("kind").getAsString());
            assertEquals(2, plugin.getAsJsonObject("result").get("count").getAsInt());
            assertEquals(List.of("minecraft:glass", "minecraft:tinted_glass"),
                    strings(plugin.getAsJsonArray("ingredients").get(1).getAsJsonObject().get("options")));

            JsonObject byKey = ask(harness, "myplugin:star_beacon", "makes");
            assertEquals(List.of("myplugin:star_beacon"), keys(byKey));
            JsonObject near = ask(harness, "beakon", "makes");
            assertEquals("near", near.getAsJsonObject("query").get("match").getAsString());
            assertEquals("minecraft:beacon", strings(near.getAsJsonObject("query").get("suggestions")).get(0));
            assertTrue(near.getAsJsonArray("recipes").isEmpty());

            JsonObject iron = recipe(ask(harness, "iron ingot", "makes"), "minecraft:iron_ingot_from_smelting_raw_iron");
            assertEquals("smelting", iron.get("kind").getAsString());
            assertEquals(200, iron.get("cook_ticks").getAsInt());
            JsonObject slab = recipe(ask(harness, "minecraft:stone_slab", "makes"),
                    "minecraft:stone_slab_from_stone_stonecutting");
            assertEquals("stonecutting", slab.get("kind").getAsString());
            assertEquals(2, slab.getAsJsonObject("result").get("count").getAsInt());
            JsonObject sword = recipe(ask(harness, "netherite_sword", "makes"), "minecraft:netherite_sword_smithing");
            assertEquals("smithing_transform", sword.get("kind").getAsString());
            assertEquals("template", sword.getAsJsonArray("ingredients").get(0).getAsJsonObject().get("slot")
                    .getAsString());
            assertTrue(keys(ask(harness, "oak_log", "uses")).contains("minecraft:oak_planks"));

            // One reading for all of the lookups above, on the primary thread (the global region).
            assertEquals(List.of(true), READ_ON_PRIMARY);
        }
    }

    @Test
    void aReloadOrAPluginsNewRecipeIsSeenByTheNextLookup() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            READ_ON_PRIMARY.clear();
            register(harness);
            assertEquals(2, ask(harness, "beacon", "makes").get("total").getAsInt());
            ShapelessRecipe cheap = new ShapelessRecipe(new NamespacedKey("datapack", "cheap_beacon"),
                    new ItemStack(Material.BEACON));
            cheap.addIngredient(Material.GLASS);
            harness.server.addRecipe(cheap);
            harness.server.getPluginManager().callEvent(new ServerLoadEvent(ServerLoadEvent.LoadType.RELOAD));
            JsonObject again = ask(harness, "beacon", "makes");
            assertEquals(List.of("minecraft:beacon", "datapack:cheap_beacon", "myplugin:star_beacon"), keys(again));
            assertEquals(List.of(true, true), READ_ON_PRIMARY);
        }
    }

    @Test
    void itemFactsComeFromTheMaterial() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            JsonObject data = new JsonObject();
            data.addProperty("item", "Diamond Sword");
            harness.bridge.latest().send(TestBridge.frame("b-90", "facts.item", null, data));
            JsonObject facts = harness.next("facts.item.result").frame().getAsJsonObject("data")
                    .getAsJsonObject("facts");
            assertEquals("minecraft:diamond_sword", facts.get("key").getAsString());
            assertEquals(1, facts.get("max_stack").getAsInt());
            assertEquals(Material.DIAMOND_SWORD.getMaxDurability(), facts.get("durability").getAsInt());
            assertFalse(facts.get("edible").getAsBoolean());
            assertFalse(facts.get("block").getAsBoolean());
            data.addProperty("item", "bread");
            harness.bridge.latest().send(TestBridge.frame("b-91", "facts.item", null, data));
            JsonObject bread = harness.next("facts.item.result").frame().getAsJsonObject("data")
                    .getAsJsonObject("facts");
            assertTrue(bread.get("edible").getAsBoolean());
        }
    }
}
