package dev.mineclaw.testkit;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.BlockFacts;
import dev.mineclaw.core.platform.BlockLookup;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.ItemFacts;
import dev.mineclaw.core.platform.PlayerFacts;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads the fact groups of {@code player.set} (CONTROL.md) onto a player's current facts. Values
 * are taken as given, hostile ones included: bounding them is the plugin core's job, and tests
 * want to see it done. Shapes are checked, and a bad one names its field.
 */
final class FactsOp {
    private static final Set<String> GROUPS = Set.of("op", "name", "ref", "location", "vitals", "game_mode", "state",
            "environment", "effects", "inventory", "look", "feet");

    /** The fact groups {@code player.add} may carry besides its own fields. */
    private static final Set<String> ADD_FIELDS = Set.of("uuid", "permissions", "held_item", "target_block");

    private FactsOp() {}

    /**
     * A joining player's facts: the defaults, the older {@code held_item} (main hand, hotbar slot
     * 0) and {@code target_block} (looked at, 3 blocks away) of {@code player.add}, then any fact
     * group the op names.
     */
    static TestFacts initial(ItemSnapshot held, BlockSnapshot target, JsonObject op) {
        TestFacts facts = TestFacts.defaults();
        InventoryFacts inventory = facts.inventory();
        if (held.material() != null && held.count() > 0 && !"minecraft:air".equals(held.material())) {
            inventory = new InventoryFacts(0, Map.of(0, new ItemFacts(held.material(), held.count(),
                    held.displayName(), List.of(), 0, 0)));
        }
        TestFacts.Sight look = facts.look();
        if (target.material() != null) {
            look = new TestFacts.Sight(new BlockFacts(target.material(), target.world(), target.x(), target.y(),
                    target.z(), Map.of(), 15), 3, null);
        }
        facts = new TestFacts(facts.player(), inventory, look, facts.feet());
        JsonObject groups = new JsonObject();
        for (String key : op.keySet()) {
            if (!ADD_FIELDS.contains(key)) {
                groups.add(key, op.get(key));
            }
        }
        return apply(facts, groups);
    }

    /** {@code current} with every group the op names replaced. */
    static TestFacts apply(TestFacts current, JsonObject op) {
        for (String key : op.keySet()) {
            if (!GROUPS.contains(key)) {
                throw new BadCommand("player.set: unknown field '" + key + "'");
            }
        }
        PlayerFacts player = current.player();
        PlayerFacts.Location location = player.location();
        if (op.has("location")) {
            Fields in = Fields.of(op, "location");
            location = new PlayerFacts.Location(in.string("world", location.world()),
                    in.choice("dimension", PlayerFacts.Dimension.class, location.dimension()),
                    in.number("x", location.x()), in.number("y", location.y()), in.number("z", location.z()),
                    (float) in.number("yaw", location.yaw()), (float) in.number("pitch", location.pitch()));
        }
        PlayerFacts.Vitals vitals = player.vitals();
        if (op.has("vitals")) {
            Fields in = Fields.of(op, "vitals");
            vitals = new PlayerFacts.Vitals(in.number("health", vitals.health()),
                    in.number("max_health", vitals.maxHealth()), in.integer("food", vitals.food()),
                    (float) in.number("saturation", vitals.saturation()), in.integer("level", vitals.level()));
        }
        PlayerFacts.GameMode gameMode = op.has("game_mode")
                ? Fields.enumValue("game_mode", Fields.text(op.get("game_mode"), "game_mode"), PlayerFacts.GameMode.class)
                : player.gameMode();
        PlayerFacts.Movement movement = player.movement();
        if (op.has("state")) {
            Fields in = Fields.of(op, "state");
            movement = new PlayerFacts.Movement(in.flag("on_ground", movement.onGround()),
                    in.flag("sneaking", movement.sneaking()), in.flag("sprinting", movement.sprinting()),
                    in.flag("swimming", movement.swimming()), in.flag("gliding", movement.gliding()),
                    in.flag("flying", movement.flying()), in.flag("in_water", movement.inWater()),
                    in.flag("in_lava", movement.inLava()), in.flag("sleeping", movement.sleeping()));
        }
        PlayerFacts.Surroundings surroundings = player.surroundings();
        if (op.has("environment")) {
            Fields in = Fields.of(op, "environment");
            surroundings = new PlayerFacts.Surroundings((long) in.number("time_of_day", surroundings.timeOfDay()),
                    in.choice("weather", PlayerFacts.Weather.class, surroundings.weather()),
                    in.string("biome", surroundings.biome()), in.integer("light", surroundings.light()));
        }
        List<PlayerFacts.Effect> effects = player.effects();
        if (op.has("effects")) {
            effects = new ArrayList<>();
            for (Fields in : Fields.list(op, "effects")) {
                effects.add(new PlayerFacts.Effect(in.required("type"), in.integer("amplifier", 0),
                        in.integer("duration_ticks", 600)));
            }
        }
        PlayerFacts facts = new PlayerFacts(location, vitals, gameMode, movement, surroundings, effects);
        InventoryFacts inventory = op.has("inventory") ? inventory(Fields.of(op, "inventory")) : current.inventory();
        TestFacts.Sight look = op.has("look") ? sight(Fields.of(op, "look")) : current.look();
        BlockLookup feet = op.has("feet") ? feet(Fields.of(op, "feet")) : current.feet();
        return new TestFacts(facts, inventory, look, feet);
    }

    private static InventoryFacts inventory(Fields in) {
        Map<Integer, ItemFacts> slots = new HashMap<>();
        if (in.has("slots")) {
            Fields raw = in.object("slots");
            for (String key : raw.keys()) {
                int index;
                try {
                    index = Integer.parseInt(key);
                } catch (NumberFormatException exc) {
                    throw new BadCommand("player.set: inventory.slots key '" + key + "' is not a slot number 0-40");
                }
                if (index < 0 || index > InventoryFacts.LAST_SLOT) {
                    throw new BadCommand("player.set: inventory.slots key '" + key + "' is not a slot number 0-40");
                }
                slots.put(index, item(raw.object(key)));
            }
        }
        int held = in.integer("held_slot", 0);
        if (held < 0 || held > 8) {
            throw new BadCommand("player.set: inventory.held_slot must be 0-8");
        }
        return new InventoryFacts(held, slots);
    }

    static ItemFacts item(Fields in) {
        List<ItemFacts.Enchantment> enchantments = new ArrayList<>();
        if (in.has("enchantments")) {
            for (Fields enchantment : in.list("enchantments")) {
                enchantments.add(new ItemFacts.Enchantment(enchantment.required("id"), enchantment.integer("level", 1)));
            }
        }
        return new ItemFacts(in.required("type"), in.integer("amount", 1), in.string("name", null), enchantments,
                in.integer("damage", 0), in.integer("max_damage", 0));
    }

    private static TestFacts.Sight sight(Fields in) {
        BlockFacts block = in.has("block") && !in.isNull("block") ? block(in.object("block")) : null;
        Double unloadedAt = in.has("unloaded_at") && !in.isNull("unloaded_at") ? in.number("unloaded_at", 0) : null;
        return new TestFacts.Sight(block, in.number("distance", 3), unloadedAt);
    }

    private static BlockLookup feet(Fields in) {
        String result = in.string("result", "hit");
        return switch (result) {
            case "hit" -> BlockLookup.hit(block(in.object("block")));
            case "miss" -> BlockLookup.miss();
            case "unloaded" -> BlockLookup.unloaded();
            default -> throw new BadCommand("player.set: feet.result must be hit, miss or unloaded");
        };
    }

    static BlockFacts block(Fields in) {
        Map<String, String> properties = new LinkedHashMap<>();
        if (in.has("properties")) {
            Fields raw = in.object("properties");
            for (String key : raw.keys()) {
                properties.put(key, raw.required(key));
            }
        }
        return new BlockFacts(in.required("type"), in.string("world", "world"), in.integer("x", 0), in.integer("y", 0),
                in.integer("z", 0), properties, in.integer("light", 15));
    }

    /** Typed reads of one JSON object, each failure naming {@code path.field}. */
    record Fields(JsonObject object, String path) {
        static Fields of(JsonObject parent, String field) {
            JsonElement value = parent.get(field);
            if (value == null || !value.isJsonObject()) {
                throw new BadCommand("player.set: " + field + " must be an object");
            }
            return new Fields(value.getAsJsonObject(), field);
        }

        static List<Fields> list(JsonObject parent, String field) {
            return new Fields(parent, "").list(field);
        }

        List<Fields> list(String field) {
            JsonElement value = this.object.get(field);
            if (value == null || !value.isJsonArray()) {
                throw fail(field, "must be an array of objects");
            }
            List<Fields> items = new ArrayList<>();
            for (int i = 0; i < value.getAsJsonArray().size(); i++) {
                JsonElement item = value.getAsJsonArray().get(i);
                if (!item.isJsonObject()) {
                    throw fail(field + "[" + i + "]", "must be an object");
                }
                items.add(new Fields(item.getAsJsonObject(), name(field + "[" + i + "]")));
            }
            return items;
        }

        boolean has(String field) {
            return this.object.has(field);
        }

        boolean isNull(String field) {
            return this.object.get(field).isJsonNull();
        }

        Set<String> keys() {
            return this.object.keySet();
        }

        Fields object(String field) {
            JsonElement value = this.object.get(field);
            if (value == null || !value.isJsonObject()) {
                throw fail(field, "must be an object");
            }
            return new Fields(value.getAsJsonObject(), name(field));
        }

        String required(String field) {
            if (!has(field)) {
                throw fail(field, "is required");
            }
            return string(field, null);
        }

        String string(String field, String fallback) {
            return has(field) ? text(this.object.get(field), name(field)) : fallback;
        }

        double number(String field, double fallback) {
            JsonElement value = this.object.get(field);
            if (value == null) {
                return fallback;
            }
            if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isNumber()) {
                throw fail(field, "must be a number");
            }
            return value.getAsDouble();
        }

        int integer(String field, int fallback) {
            double value = number(field, fallback);
            if (value != Math.rint(value) || value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
                throw fail(field, "must be an integer");
            }
            return (int) value;
        }

        boolean flag(String field, boolean fallback) {
            JsonElement value = this.object.get(field);
            if (value == null) {
                return fallback;
            }
            if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
                throw fail(field, "must be a boolean");
            }
            return value.getAsBoolean();
        }

        <E extends Enum<E>> E choice(String field, Class<E> type, E fallback) {
            return has(field) ? enumValue(name(field), string(field, null), type) : fallback;
        }

        static <E extends Enum<E>> E enumValue(String where, String value, Class<E> type) {
            try {
                return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException exc) {
                throw new BadCommand("player.set: " + where + " cannot be '" + value + "'");
            }
        }

        static String text(JsonElement value, String where) {
            if (value == null || !value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
                throw new BadCommand("player.set: " + where + " must be a string");
            }
            return value.getAsString();
        }

        private String name(String field) {
            return this.path.isEmpty() ? field : this.path + "." + field;
        }

        private BadCommand fail(String field, String problem) {
            return new BadCommand("player.set: " + name(field) + " " + problem);
        }
    }
}
