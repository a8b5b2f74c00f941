package dev.mineclaw.core.snapshot;

import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Turns a {@link BlockLookup} into the answer of {@code snapshot.block}: the result, and for a
 * hit the type, position, world, light and only the allow-listed state properties.
 */
public final class BlockProjection {
    /** The block-state properties a snapshot may report (docs/protocol.md, BlockView). */
    public static final Set<String> PROPERTIES = Set.of("facing", "half", "axis", "age", "level", "powered", "open",
            "lit", "waterlogged", "type", "shape", "part", "occupied", "hinge", "rotation", "power", "layers",
            "distance", "persistent", "snowy");
    public static final int PROPERTIES_MAX = 16;
    /** Vanilla property values are short lowercase words and numbers; anything else stays out. */
    private static final Pattern VALUE = Pattern.compile("[a-z0-9_]{1,64}");

    private BlockProjection() {}

    /** The answer data. */
    public static JsonObject project(BlockLookup lookup) {
        JsonObject answer = new JsonObject();
        answer.addProperty("result", lookup.result().name().toLowerCase(Locale.ROOT));
        answer.add("block", lookup.result() == BlockLookup.Result.HIT ? block(lookup.block()) : JsonNull.INSTANCE);
        return answer;
    }

    private static JsonObject block(BlockFacts facts) {
        JsonObject block = new JsonObject();
        block.addProperty("type", Bounds.requireKey(facts.type(), "the block type"));
        JsonObject position = new JsonObject();
        position.addProperty("x", facts.x());
        position.addProperty("y", facts.y());
        position.addProperty("z", facts.z());
        block.add("position", position);
        block.addProperty("world", Bounds.world(facts.world()));
        JsonObject properties = new JsonObject();
        new TreeMap<>(facts.properties()).entrySet().stream()
                .filter(property -> PROPERTIES.contains(property.getKey()))
                .filter(property -> property.getValue() != null && VALUE.matcher(property.getValue()).matches())
                .limit(PROPERTIES_MAX)
                .forEach((Map.Entry<String, String> property) -> properties.addProperty(property.getKey(),
                        property.getValue()));
        block.add("properties", properties);
        block.addProperty("light", Bounds.clamp(facts.light(), 0, 15));
        return block;
    }
}
