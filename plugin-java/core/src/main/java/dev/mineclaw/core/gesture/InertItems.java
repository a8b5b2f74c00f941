package dev.mineclaw.core.gesture;

import java.util.Locale;
import java.util.Set;

/**
 * Whether right-clicking air with an item does nothing of its own, so the click can only mean
 * an answer. Food and drinks (eaten), throwables, bows, buckets, spawn eggs, armour and other
 * wearables (equipped by a right-click), books, maps and horns all act on their own: a player
 * using one is doing that, not answering. Everything else (a stick, a sword, a block) is inert.
 */
public final class InertItems {
    private static final Set<String> USABLE = Set.of(
            "bow", "crossbow", "trident", "shield", "fishing_rod", "carrot_on_a_stick",
            "warped_fungus_on_a_stick", "ender_pearl", "ender_eye", "snowball", "egg", "blue_egg",
            "brown_egg", "experience_bottle", "firework_rocket", "spyglass", "elytra", "written_book",
            "writable_book", "knowledge_book", "map", "filled_map", "bucket", "bundle", "brush",
            "wind_charge", "honey_bottle", "glass_bottle", "carved_pumpkin", "totem_of_undying",
            "lead", "name_tag", "saddle", "compass", "recovery_compass", "clock", "mace");
    private static final String[] USABLE_SUFFIXES = {
        "_spawn_egg", "_bucket", "_helmet", "_chestplate", "_leggings", "_boots", "potion", "_horn",
        "_bundle", "_head", "_skull", "_harness", "_banner_pattern"
    };

    private InertItems() {
    }

    /**
     * @param material the item type, namespaced ({@code minecraft:stick}) or not
     * @param edible whether the server says the item is eaten or drunk
     */
    public static boolean isInert(String material, boolean edible) {
        if (material == null || material.isEmpty() || edible) {
            return false;
        }
        String name = material.toLowerCase(Locale.ROOT);
        int colon = name.indexOf(':');
        if (colon >= 0) {
            if (!name.substring(0, colon).equals("minecraft")) {
                return false; // another plugin's or mod's item may do anything
            }
            name = name.substring(colon + 1);
        }
        if (name.equals("air") || USABLE.contains(name)) {
            return false;
        }
        for (String suffix : USABLE_SUFFIXES) {
            if (name.endsWith(suffix)) {
                return false;
            }
        }
        return true;
    }
}
