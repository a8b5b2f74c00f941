package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The message types of minor version 1.1, for the native tools: {@code snapshot.player},
 * {@code snapshot.item}, {@code snapshot.block} and {@code approval.show}, all requests from the
 * bridge (docs/protocol.md, "Snapshots and approval prompts").
 */
final class ToolTypes {
    static final Pattern NAMESPACED_KEY = Pattern.compile("[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}");
    static final Pattern ITEM_SLOT =
            Pattern.compile("[0-9]|[12][0-9]|3[0-5]|helmet|chestplate|leggings|boots|off_hand|main_hand");
    static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{22,64}");
    static final Pattern OPTION = Pattern.compile("[a-z0-9_-]{1,32}");
    /** The block state properties a snapshot may report; anything else (and all tile data) stays out. */
    static final Set<String> BLOCK_PROPERTIES = Set.of("facing", "half", "axis", "age", "level", "powered", "open",
            "lit", "waterlogged", "type", "shape", "part", "occupied", "hinge", "rotation", "power", "layers",
            "distance", "persistent", "snowy");
    static final Set<String> ITEM_MODES =
            Set.of("inventory", "slot", "main_hand", "off_hand", "helmet", "chestplate", "leggings", "boots");
    static final int EFFECTS_MAX = 32;
    static final int ITEMS_MAX = 41;
    static final int ENCHANTMENTS_MAX = 16;
    static final int NAME_MAX = 128;
    static final int PROPERTIES_MAX = 16;
    static final int BUTTONS_MAX = 8;

    /** Bounds of the non-integer numbers: finite, and far beyond anything a server reports. */
    static final double COORDINATE_MAX = 1e9;
    static final double AMOUNT_MAX = 1e9;

    private static final long INT_MIN = Integer.MIN_VALUE;
    private static final long INT_MAX = Integer.MAX_VALUE;
    private static final int WORLD_MAX = 64;
    private static final int KEY_MAX = 256;
    private static final int PROPERTY_VALUE_MAX = 64;

    private ToolTypes() {}

    static void register() {
        Direction toPlugin = Direction.BRIDGE_TO_PLUGIN;
        MessageTypes.request(toPlugin, "snapshot.player", ToolTypes::playerOnly, ToolTypes::playerSnapshot);
        MessageTypes.request(toPlugin, "snapshot.item", ToolTypes::itemRequest, data -> {
            data.only(Set.of("items", "truncated"), Set.of("items", "truncated"));
            JsonArray items = data.array("items", ITEMS_MAX);
            for (int i = 0; i < items.size(); i++) {
                itemView(Fields.of(items.get(i), data.name("items[" + i + "]"), ErrorCode.INVALID_DATA));
            }
            data.bool("truncated");
        });
        MessageTypes.request(toPlugin, "snapshot.block", data -> {
            data.only(Set.of("player", "mode", "distance"), Set.of("player", "mode", "distance"));
            data.string("player", 36, 36, Shapes.UUID);
            data.oneOf("mode", Set.of("look", "feet"));
            data.integer("distance", 1, 128);
        }, ToolTypes::blockSnapshot);
        MessageTypes.request(toPlugin, "approval.show", ToolTypes::approvalShow, data -> {
            data.only(Set.of("shown"), Set.of("shown"));
            data.bool("shown");
        });
    }

    private static void playerOnly(Fields data) {
        data.only(Set.of("player"), Set.of("player"));
        data.string("player", 36, 36, Shapes.UUID);
    }

    private static void playerSnapshot(Fields data) {
        Set<String> fields = Set.of("player", "world", "dimension", "position", "facing", "health", "max_health",
                "food", "saturation", "level", "game_mode", "state", "environment", "effects");
        data.only(fields, fields);
        Shapes.playerRef(data.object("player"));
        data.string("world", 1, WORLD_MAX, null);
        data.oneOf("dimension", Set.of("overworld", "nether", "end", "custom"));
        Fields position = data.object("position");
        position.only(Set.of("x", "y", "z"), Set.of("x", "y", "z"));
        for (String axis : List.of("x", "y", "z")) {
            position.number(axis, -COORDINATE_MAX, COORDINATE_MAX);
        }
        Fields facing = data.object("facing");
        facing.only(Set.of("yaw", "pitch"), Set.of("yaw", "pitch"));
        facing.number("yaw", -180, 180);
        facing.number("pitch", -90, 90);
        data.number("health", 0, AMOUNT_MAX);
        data.number("max_health", 0, AMOUNT_MAX);
        data.integer("food", 0, 20);
        data.number("saturation", 0, AMOUNT_MAX);
        data.integer("level", INT_MIN, INT_MAX);
        data.oneOf("game_mode", Set.of("survival", "creative", "adventure", "spectator"));
        Set<String> flags = Set.of("on_ground", "sneaking", "sprinting", "swimming", "gliding", "flying", "in_water",
                "in_lava", "sleeping");
        Fields state = data.object("state");
        state.only(flags, flags);
        flags.forEach(state::bool);
        Fields environment = data.object("environment");
        Set<String> surroundings = Set.of("time_of_day", "weather", "biome", "light");
        environment.only(surroundings, surroundings);
        environment.integer("time_of_day", 0, 23999);
        environment.oneOf("weather", Set.of("clear", "rain", "thunder"));
        environment.string("biome", 3, KEY_MAX, NAMESPACED_KEY);
        environment.integer("light", 0, 15);
        JsonArray effects = data.array("effects", EFFECTS_MAX);
        for (int i = 0; i < effects.size(); i++) {
            Fields effect = Fields.of(effects.get(i), data.name("effects[" + i + "]"), ErrorCode.INVALID_DATA);
            effect.only(Set.of("type", "amplifier", "duration_ticks"), Set.of("type", "amplifier", "duration_ticks"));
            effect.string("type", 3, KEY_MAX, NAMESPACED_KEY);
            effect.integer("amplifier", INT_MIN, INT_MAX);
            effect.integer("duration_ticks", -1, INT_MAX);
        }
    }

    private static void itemRequest(Fields data) {
        data.only(Set.of("player", "mode", "slot", "max_slots", "max_chars"),
                Set.of("player", "mode", "max_slots", "max_chars"));
        data.string("player", 36, 36, Shapes.UUID);
        String mode = data.oneOf("mode", ITEM_MODES);
        if ("slot".equals(mode)) {
            if (!data.has("slot")) {
                throw new WireException(ErrorCode.INVALID_DATA, "missing field " + data.name("slot")
                        + " (required with mode 'slot')");
            }
            data.integer("slot", 0, 40);
        } else if (data.has("slot")) {
            throw data.fail("slot", "is only allowed with mode 'slot'");
        }
        data.integer("max_slots", 1, ITEMS_MAX);
        data.integer("max_chars", 256, 16384);
    }

    private static void itemView(Fields item) {
        Set<String> fields = Set.of("slot", "type", "amount", "custom_name", "enchantments", "damage");
        item.only(fields, fields);
        item.string("slot", 1, 10, ITEM_SLOT);
        item.string("type", 3, KEY_MAX, NAMESPACED_KEY);
        item.integer("amount", 1, 127);
        if (!item.isNull("custom_name")) {
            Fields name = item.object("custom_name");
            name.only(Set.of("untrusted_text"), Set.of("untrusted_text"));
            name.string("untrusted_text", 0, NAME_MAX, null);
        }
        JsonArray enchantments = item.array("enchantments", ENCHANTMENTS_MAX);
        for (int i = 0; i < enchantments.size(); i++) {
            Fields enchantment =
                    Fields.of(enchantments.get(i), item.name("enchantments[" + i + "]"), ErrorCode.INVALID_DATA);
            enchantment.only(Set.of("id", "level"), Set.of("id", "level"));
            enchantment.string("id", 3, KEY_MAX, NAMESPACED_KEY);
            enchantment.integer("level", INT_MIN, INT_MAX);
        }
        if (!item.isNull("damage")) {
            Fields damage = item.object("damage");
            damage.only(Set.of("current", "max"), Set.of("current", "max"));
            damage.integer("current", INT_MIN, INT_MAX);
            damage.integer("max", INT_MIN, INT_MAX);
        }
    }

    private static void blockSnapshot(Fields data) {
        data.only(Set.of("result", "block"), Set.of("result", "block"));
        String result = data.oneOf("result", Set.of("hit", "miss", "unloaded"));
        if (!"hit".equals(result)) {
            if (!data.isNull("block")) {
                throw data.fail("block", "must be null unless the result is 'hit'");
            }
            return;
        }
        if (data.isNull("block")) {
            throw data.fail("block", "is required when the result is 'hit'");
        }
        Fields block = data.object("block");
        Set<String> fields = Set.of("type", "position", "world", "properties", "light");
        block.only(fields, fields);
        block.string("type", 3, KEY_MAX, NAMESPACED_KEY);
        Fields position = block.object("position");
        position.only(Set.of("x", "y", "z"), Set.of("x", "y", "z"));
        for (String axis : List.of("x", "y", "z")) {
            position.integer(axis, INT_MIN, INT_MAX);
        }
        block.string("world", 1, WORLD_MAX, null);
        Fields properties = block.object("properties");
        Set<Map.Entry<String, JsonElement>> entries = block.raw("properties").getAsJsonObject().entrySet();
        if (entries.size() > PROPERTIES_MAX) {
            throw block.fail("properties", "has " + entries.size() + " entries, at most " + PROPERTIES_MAX
                    + " allowed");
        }
        for (Map.Entry<String, JsonElement> entry : entries) {
            if (!BLOCK_PROPERTIES.contains(entry.getKey())) {
                throw properties.fail(entry.getKey(), "is not a reportable block property");
            }
            properties.string(entry.getKey(), 1, PROPERTY_VALUE_MAX, null);
        }
        block.integer("light", 0, 15);
    }

    private static void approvalShow(Fields data) {
        Set<String> required = Set.of("player", "token", "prompt", "buttons", "expires_ms");
        data.only(Set.of("player", "token", "prompt", "buttons", "expires_ms", "gesture"), required);
        data.string("player", 36, 36, Shapes.UUID);
        data.string("token", 22, 64, TOKEN);
        Shapes.text(data.object("prompt"));
        JsonArray buttons = data.array("buttons", BUTTONS_MAX);
        if (buttons.size() == 0) {
            throw data.fail("buttons", "must hold at least one button");
        }
        for (int i = 0; i < buttons.size(); i++) {
            Fields button = Fields.of(buttons.get(i), data.name("buttons[" + i + "]"), ErrorCode.INVALID_DATA);
            Set<String> buttonFields = Set.of("label", "hover", "answer", "option");
            button.only(buttonFields, buttonFields);
            Shapes.text(button.object("label"));
            Shapes.nullableText(button, "hover");
            button.oneOf("answer", Set.of("approve", "deny"));
            if (!button.isNull("option")) {
                button.string("option", 1, 32, OPTION);
            }
        }
        data.integer("expires_ms", 1000, 600000);
        if (data.has("gesture")) {
            // Absent or a boolean, never null (an optional field of the protocol).
            data.bool("gesture");
        }
    }
}
