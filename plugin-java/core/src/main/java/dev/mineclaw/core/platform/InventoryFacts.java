package dev.mineclaw.core.platform;

import java.util.Map;
import java.util.TreeMap;

/**
 * A player's inventory as {@code snapshot.item} reads it, keyed by Bukkit's {@code
 * PlayerInventory} index: 0-8 hotbar and 9-35 storage, 36 boots, 37 leggings, 38 chestplate,
 * 39 helmet, 40 off hand. Only non-empty slots are present. Immutable.
 *
 * @param heldSlot the hotbar index (0-8) of the main hand
 * @param slots the non-empty slots by index
 */
public record InventoryFacts(int heldSlot, Map<Integer, ItemFacts> slots) {
    public static final int STORAGE_SLOTS = 36;
    public static final int BOOTS = 36;
    public static final int LEGGINGS = 37;
    public static final int CHESTPLATE = 38;
    public static final int HELMET = 39;
    public static final int OFF_HAND = 40;
    /** Indexes run from 0 to this, inclusive. */
    public static final int LAST_SLOT = 40;

    public InventoryFacts {
        if (heldSlot < 0 || heldSlot > 8) {
            throw new IllegalArgumentException("the held slot must be a hotbar index 0-8, got " + heldSlot);
        }
        for (Integer index : slots.keySet()) {
            if (index < 0 || index > LAST_SLOT) {
                throw new IllegalArgumentException("inventory index out of 0-40: " + index);
            }
        }
        slots = Map.copyOf(new TreeMap<>(slots));
    }

    /** An empty inventory. */
    public static InventoryFacts empty() {
        return new InventoryFacts(0, Map.of());
    }
}
