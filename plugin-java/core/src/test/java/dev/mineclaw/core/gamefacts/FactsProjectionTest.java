package dev.mineclaw.core.gamefacts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.wire.Direction;
import dev.mineclaw.core.wire.ErrorCode;
import dev.mineclaw.core.wire.Frame;
import dev.mineclaw.core.wire.FrameCodec;
import dev.mineclaw.core.wire.WireException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FactsProjectionTest {
    private final GameIndex index = GameIndex.of(VanillaSample.facts(List.of()));

    private JsonObject makes(String query) {
        return FactsProjection.recipes(this.index, query, false, 8, 16384);
    }

    private static List<String> strings(JsonElement array) {
        List<String> out = new ArrayList<>();
        array.getAsJsonArray().forEach(element -> out.add(element.getAsString()));
        return out;
    }

    private static List<String> keys(JsonObject answer) {
        List<String> out = new ArrayList<>();
        answer.getAsJsonArray("recipes").forEach(r -> out.add(r.getAsJsonObject().get("key").getAsString()));
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"beacon", "minecraft:beacon", "Beacon", "  BEACON ", "beacons", "Minecraft:Beacon"})
    void theNamesPlayersUseFindTheBeaconsRecipes(String query) {
        JsonObject answer = makes(query);
        JsonObject resolved = answer.getAsJsonObject("query");
        assertEquals("exact", resolved.get("match").getAsString());
        assertEquals("minecraft:beacon", resolved.get("item").getAsString());
        assertEquals(List.of("minecraft:beacon", "myplugin:star_beacon"), keys(answer)); // shaped before shapeless
        JsonObject beacon = answer.getAsJsonArray("recipes").get(0).getAsJsonObject();
        assertEquals("shaped", beacon.get("kind").getAsString());
        assertEquals(List.of("AAA", "ABA", "CCC"), strings(beacon.get("pattern")));
        JsonArray ingredients = beacon.getAsJsonArray("ingredients");
        assertEquals("A", ingredients.get(0).getAsJsonObject().get("slot").getAsString());
        assertEquals(List.of("minecraft:glass"), strings(ingredients.get(0).getAsJsonObject().get("options")));
        assertEquals(List.of("minecraft:nether_star"), strings(ingredients.get(1).getAsJsonObject().get("options")));
        assertEquals(List.of("minecraft:obsidian"), strings(ingredients.get(2).getAsJsonObject().get("options")));
        assertEquals(1, beacon.getAsJsonObject("result").get("count").getAsInt());
        assertTrue(beacon.get("cook_ticks").isJsonNull());
        assertEquals(2, answer.get("total").getAsInt());
        assertFalse(answer.get("truncated").getAsBoolean());
    }

    @ParameterizedTest
    @ValueSource(strings = {"beakon", "minecraft:beakon", "baecon", "becon"})
    void aNearMissIsNeverTakenForTheItemButSuggestsIt(String query) {
        JsonObject answer = makes(query);
        JsonObject resolved = answer.getAsJsonObject("query");
        assertEquals("near", resolved.get("match").getAsString());
        assertTrue(resolved.get("item").isJsonNull());
        assertEquals("minecraft:beacon", strings(resolved.get("suggestions")).get(0));
        assertEquals(0, answer.getAsJsonArray("recipes").size());
        assertEquals(0, answer.get("total").getAsInt());
    }

    @Test
    void aNameSeveralItemsShareListsThemAll() {
        JsonObject resolved = makes("planks").getAsJsonObject("query");
        assertEquals("near", resolved.get("match").getAsString());
        assertEquals(List.of("minecraft:birch_planks", "minecraft:oak_planks", "minecraft:spruce_planks"),
                strings(resolved.get("suggestions")).stream().sorted().toList());
    }

    @Test
    void nothingLikeItIsNone() {
        JsonObject resolved = makes("quantum flux capacitor").getAsJsonObject("query");
        assertEquals("none", resolved.get("match").getAsString());
        assertEquals(List.of(), strings(resolved.get("suggestions")));
    }

    @Test
    void aGridHandedOutWithOneCharacterPerCellIsGroupedByIngredient() {
        List<String> cells = List.of("glass", "glass", "glass", "glass", "nether_star", "glass", "obsidian",
                "obsidian", "obsidian");
        List<RecipeFacts.Ingredient> perCell = IntStream.range(0, 9).mapToObj(n -> new RecipeFacts.Ingredient(
                String.valueOf((char) ('a' + n)), List.of("minecraft:" + cells.get(n)))).toList();
        GameIndex served = GameIndex.of(VanillaSample.facts(List.of(RecipeFacts.shaped("served:beacon",
                "minecraft:beacon", 1, List.of("abc", "def", "ghi"), perCell))));
        JsonObject beacon = FactsProjection.recipes(served, "served:beacon", false, 8, 16384)
                .getAsJsonArray("recipes").get(0).getAsJsonObject();
        assertEquals(List.of("AAA", "ABA", "CCC"), strings(beacon.get("pattern")));
        assertEquals(3, beacon.getAsJsonArray("ingredients").size());
    }

    @Test
    void anIngredientHeldByATagIsNamedByTheTag() {
        JsonObject stick = makes("stick").getAsJsonArray("recipes").get(0).getAsJsonObject();
        JsonObject planks = stick.getAsJsonArray("ingredients").get(0).getAsJsonObject();
        assertEquals(List.of("#minecraft:planks"), strings(planks.get("options")));
        assertEquals(List.of("A", "A"), strings(stick.get("pattern")));
        assertEquals(4, stick.getAsJsonObject("result").get("count").getAsInt());
    }

    @Test
    void cookingStonecuttingAndSmithingCarryTheirOwnFields() {
        JsonArray iron = makes("iron ingot").getAsJsonArray("recipes");
        assertEquals(List.of("smelting", "blasting"), List.of(iron.get(0).getAsJsonObject().get("kind").getAsString(),
                iron.get(1).getAsJsonObject().get("kind").getAsString()));
        assertEquals(200, iron.get(0).getAsJsonObject().get("cook_ticks").getAsInt());
        assertEquals(0.7, iron.get(0).getAsJsonObject().get("experience").getAsDouble());
        assertEquals("input", iron.get(0).getAsJsonObject().getAsJsonArray("ingredients").get(0).getAsJsonObject()
                .get("slot").getAsString());
        JsonObject slab = makes("stone_slab").getAsJsonArray("recipes").get(0).getAsJsonObject();
        assertEquals("stonecutting", slab.get("kind").getAsString());
        assertEquals(2, slab.getAsJsonObject("result").get("count").getAsInt());
        assertTrue(slab.get("pattern").isJsonNull());
        JsonObject sword = makes("netherite sword").getAsJsonArray("recipes").get(0).getAsJsonObject();
        assertEquals("smithing_transform", sword.get("kind").getAsString());
        List<String> slots = new ArrayList<>();
        sword.getAsJsonArray("ingredients").forEach(i -> slots.add(i.getAsJsonObject().get("slot").getAsString()));
        assertEquals(List.of("template", "base", "addition"), slots);
    }

    @Test
    void usesFindsEveryRecipeThatTakesTheItemTrimsIncluded() {
        JsonObject answer = FactsProjection.recipes(this.index, "iron_ingot", true, 8, 16384);
        assertEquals(List.of("minecraft:coast_armor_trim_smithing_template_smithing_trim"), keys(answer));
        JsonObject trim = answer.getAsJsonArray("recipes").get(0).getAsJsonObject();
        assertTrue(trim.get("result").isJsonNull());
        assertEquals(2, FactsProjection.recipes(this.index, "nether star", true, 8, 16384).get("total").getAsInt());
    }

    @Test
    void aRecipeKeyFindsThatRecipeAndShowsWhoseItIs() {
        JsonObject answer = makes("myplugin:star_beacon");
        assertEquals(List.of("myplugin:star_beacon"), keys(answer));
        assertEquals("minecraft:beacon", answer.getAsJsonObject("query").get("item").getAsString());
    }

    @Test
    void theLimitAndTheCharacterBudgetCutTheListAndSaySo() {
        List<RecipeFacts> many = IntStream.range(0, 40).mapToObj(n -> RecipeFacts.shapeless("extra:stick_" + n,
                "minecraft:stick", 1, List.of(List.of("minecraft:oak_log")))).toList();
        GameIndex big = GameIndex.of(VanillaSample.facts(many));
        JsonObject limited = FactsProjection.recipes(big, "stick", false, 5, 16384);
        assertEquals(5, limited.getAsJsonArray("recipes").size());
        assertEquals(41, limited.get("total").getAsInt());
        assertTrue(limited.get("truncated").getAsBoolean());
        JsonObject budget = FactsProjection.recipes(big, "stick", false, 32, 600);
        String listed = budget.getAsJsonArray("recipes").toString();
        assertTrue(listed.length() <= 600, listed);
        assertTrue(budget.getAsJsonArray("recipes").size() >= 1);
        assertTrue(budget.get("truncated").getAsBoolean());
    }

    @Test
    void hostileRegistryFactsAreBoundedOrLeftOut() {
        List<String> manyOptions = IntStream.range(0, 20).mapToObj(n -> "minecraft:dye_" + n).toList();
        List<RecipeFacts> hostile = List.of(
                RecipeFacts.shaped("Not A Key", "minecraft:stick", 1, List.of("#"),
                        List.of(new RecipeFacts.Ingredient("#", List.of("minecraft:oak_log")))),
                RecipeFacts.shaped("odd:huge", "minecraft:stick", 500, List.of("XYZW", "Q Q", "XXX", "XXX"), List.of(
                        new RecipeFacts.Ingredient("X", manyOptions),
                        new RecipeFacts.Ingredient("Y", List.of("BAD KEY")))));
        GameIndex odd = GameIndex.of(VanillaSample.facts(hostile));
        JsonObject answer = FactsProjection.recipes(odd, "stick", false, 32, 16384);
        assertFalse(keys(answer).contains("Not A Key"));
        JsonObject huge = answer.getAsJsonArray("recipes").get(0).getAsJsonObject(); // shaped, "minecraft:" first? no: odd
        if (!"odd:huge".equals(huge.get("key").getAsString())) {
            huge = answer.getAsJsonArray("recipes").get(1).getAsJsonObject();
        }
        assertEquals("odd:huge", huge.get("key").getAsString());
        assertEquals(127, huge.getAsJsonObject("result").get("count").getAsInt());
        assertEquals(List.of("A  ", "   ", "AAA"), strings(huge.get("pattern")));
        JsonObject x = huge.getAsJsonArray("ingredients").get(0).getAsJsonObject();
        assertEquals(8, x.getAsJsonArray("options").size());
        assertEquals(12, x.get("more").getAsInt());
        assertEquals(1, huge.getAsJsonArray("ingredients").size());
    }

    @Test
    void itemFactsSayWhatTheServerSaysAndNothingOnANearMiss() {
        JsonObject answer = FactsProjection.item(this.index, "Diamond Sword");
        JsonObject facts = answer.getAsJsonObject("facts");
        assertEquals("minecraft:diamond_sword", facts.get("key").getAsString());
        assertEquals(1, facts.get("max_stack").getAsInt());
        assertEquals(1561, facts.get("durability").getAsInt());
        assertEquals(List.of("minecraft:swords"), strings(facts.get("tags")));
        assertEquals(0, facts.get("recipes_making").getAsInt());
        assertEquals(1, facts.get("recipes_using").getAsInt());
        assertEquals("common", facts.get("rarity").getAsString());
        JsonObject beacon = FactsProjection.item(this.index, "beacon").getAsJsonObject("facts");
        assertEquals("rare", beacon.get("rarity").getAsString());
        assertEquals(2, beacon.get("recipes_making").getAsInt());
        assertTrue(FactsProjection.item(this.index, "bread").getAsJsonObject("facts").get("edible").getAsBoolean());
        JsonObject miss = FactsProjection.item(this.index, "diamond swrod");
        assertTrue(miss.get("facts").isJsonNull());
        assertEquals("near", miss.getAsJsonObject("query").get("match").getAsString());
    }

    @Test
    void theAnswersAreWhatTheWireAccepts() {
        FrameCodec codec = new FrameCodec();
        List<String> hostileOptions = IntStream.range(0, 20).mapToObj(n -> "minecraft:dye_" + n).toList();
        GameIndex odd = GameIndex.of(VanillaSample.facts(List.of(RecipeFacts.shaped("odd:huge", "minecraft:stick",
                500, List.of("XYZW", "Q Q", "XXX", "XXX"), List.of(new RecipeFacts.Ingredient("X", hostileOptions))))));
        for (JsonObject answer : List.of(makes("beacon"), makes("beakon"), makes("nothing at all"), makes("stick"),
                makes("iron ingot"), makes("netherite_sword"), FactsProjection.recipes(odd, "stick", false, 32, 16384),
                FactsProjection.recipes(this.index, "iron_ingot", true, 8, 16384))) {
            codec.check(new Frame("p-1", "facts.recipes.result", "b-1", answer), Direction.PLUGIN_TO_BRIDGE);
        }
        for (String query : List.of("beacon", "beakon", "nothing at all", "bread", "planks")) {
            codec.check(new Frame("p-1", "facts.item.result", "b-1", FactsProjection.item(this.index, query)),
                    Direction.PLUGIN_TO_BRIDGE);
        }
    }

    @Test
    void theWireRefusesAnAnswerThatBreaksItsRules() {
        FrameCodec codec = new FrameCodec();
        JsonObject exactWithoutItem = makes("beacon");
        exactWithoutItem.getAsJsonObject("query").add("item", com.google.gson.JsonNull.INSTANCE);
        JsonObject cookingWithoutTicks = makes("iron ingot");
        cookingWithoutTicks.getAsJsonArray("recipes").get(0).getAsJsonObject()
                .add("cook_ticks", com.google.gson.JsonNull.INSTANCE);
        for (JsonObject answer : List.of(exactWithoutItem, cookingWithoutTicks)) {
            WireException refused = org.junit.jupiter.api.Assertions.assertThrows(WireException.class,
                    () -> codec.check(new Frame("p-1", "facts.recipes.result", "b-1", answer),
                            Direction.PLUGIN_TO_BRIDGE));
            assertEquals(ErrorCode.INVALID_DATA, refused.code());
        }
    }
}
