package dev.mineclaw.core.snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BlockProjectionTest {
    private static JsonObject project(BlockLookup lookup) {
        return WireCheck.answer("snapshot.block", BlockProjection.project(lookup));
    }

    @Test
    void aMissAndAnUnloadedChunkCarryNoBlock() {
        JsonObject miss = project(BlockLookup.miss());
        assertEquals("miss", miss.get("result").getAsString());
        assertTrue(miss.get("block").isJsonNull());
        JsonObject unloaded = project(BlockLookup.unloaded());
        assertEquals("unloaded", unloaded.get("result").getAsString());
        assertTrue(unloaded.get("block").isJsonNull());
    }

    @Test
    void aHitKeepsOnlyAllowListedProperties() {
        Map<String, String> properties = new HashMap<>();
        properties.put("facing", "east");
        properties.put("half", "bottom");
        properties.put("waterlogged", "false");
        properties.put("text", "secret sign text");
        properties.put("nbt", "{Items:[]}");
        properties.put("command", "op Steve");
        properties.put("rotation", "Weird Value!");
        JsonObject answer = project(BlockLookup.hit(new BlockFacts("minecraft:oak_stairs", "world", 10, -64, 3,
                properties, 99)));
        JsonObject block = answer.getAsJsonObject("block");
        assertEquals("hit", answer.get("result").getAsString());
        assertEquals(Set.of("facing", "half", "waterlogged"), block.getAsJsonObject("properties").keySet());
        assertEquals("east", block.getAsJsonObject("properties").get("facing").getAsString());
        assertEquals(15, block.get("light").getAsInt());
        assertEquals(-64, block.getAsJsonObject("position").get("y").getAsInt());
        assertEquals(Set.of("type", "position", "world", "properties", "light"), block.keySet());
    }

    @Test
    void atMostSixteenPropertiesInNameOrder() {
        Map<String, String> properties = new HashMap<>();
        BlockProjection.PROPERTIES.forEach(name -> properties.put(name, "1"));
        JsonObject block = project(BlockLookup.hit(new BlockFacts("minecraft:odd_block", "world", 0, 0, 0,
                properties, 0))).getAsJsonObject("block");
        assertEquals(BlockProjection.PROPERTIES_MAX, block.getAsJsonObject("properties").size());
        assertTrue(block.getAsJsonObject("properties").has("age"));
        assertTrue(!block.getAsJsonObject("properties").has("waterlogged"));
    }

    @Test
    void aBlockTypeThatIsNotAKeyIsAPlatformBug() {
        assertThrows(IllegalStateException.class, () -> BlockProjection.project(BlockLookup.hit(
                new BlockFacts("Oak Stairs", "world", 0, 0, 0, Map.of(), 0))));
    }

    @Test
    void aHitNeedsABlockAndOnlyAHitHasOne() {
        assertThrows(IllegalArgumentException.class, () -> new BlockLookup(BlockLookup.Result.HIT, null));
        assertThrows(IllegalArgumentException.class, () -> new BlockLookup(BlockLookup.Result.MISS,
                new BlockFacts("minecraft:stone", "world", 0, 0, 0, Map.of(), 0)));
    }
}
