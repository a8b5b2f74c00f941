package dev.mineclaw.core.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BlockStateTextTest {
    @Test
    void propertiesAreReadInOrder() {
        Map<String, String> properties = BlockStateText.properties(
                "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]");
        assertEquals(List.of("facing", "half", "shape", "waterlogged"), List.copyOf(properties.keySet()));
        assertEquals("north", properties.get("facing"));
        assertEquals("false", properties.get("waterlogged"));
    }

    @Test
    void aBlockWithoutStateHasNoProperties() {
        assertEquals(Map.of(), BlockStateText.properties("minecraft:stone"));
        assertEquals(Map.of(), BlockStateText.properties("minecraft:stone[]"));
        assertEquals(Map.of(), BlockStateText.properties("minecraft:stone]["));
    }

    @Test
    void oddPiecesAreSkippedNotTrusted() {
        Map<String, String> properties = BlockStateText.properties(
                "minecraft:x[a=1,=2,b,c=,Upper=x,d=<click>,e=ok,a=again]");
        assertEquals(Map.of("a", "1", "e", "ok"), properties);
    }

    @Test
    void aLongListIsCut() {
        StringBuilder text = new StringBuilder("minecraft:x[");
        for (int i = 0; i < 100; i++) {
            text.append(i == 0 ? "" : ",").append("p").append(i).append("=v");
        }
        assertEquals(BlockStateText.MAX_PROPERTIES, BlockStateText.properties(text.append(']').toString()).size());
    }
}
