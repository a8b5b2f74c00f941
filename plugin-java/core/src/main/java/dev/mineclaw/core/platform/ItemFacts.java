package dev.mineclaw.core.platform;

import java.util.List;
import java.util.Objects;

/**
 * One non-empty item stack as {@code snapshot.item} may describe it. The adapter fills only these
 * fields: never NBT, persistent data, full components, book text or container contents. Immutable.
 *
 * @param type the item's namespaced key, e.g. {@code minecraft:diamond_sword}
 * @param amount the stack size, at least 1
 * @param customName the custom name a player gave it, as plain text without styling (written by
 *     players, so untrusted; the core caps it), or null when it has none
 * @param enchantments the enchantments on the item, in any order
 * @param damage the damage taken, 0 when undamaged or not damageable
 * @param maxDamage the durability, 0 when the item is not damageable
 */
public record ItemFacts(String type, int amount, String customName, List<Enchantment> enchantments, int damage,
        int maxDamage) {
    public ItemFacts {
        Objects.requireNonNull(type, "type");
        enchantments = List.copyOf(enchantments);
    }

    /** A plain stack: no name, no enchantments, no durability. */
    public static ItemFacts of(String type, int amount) {
        return new ItemFacts(type, amount, null, List.of(), 0, 0);
    }

    /**
     * @param id the enchantment's namespaced key, e.g. {@code minecraft:sharpness}
     * @param level 1 for level I
     */
    public record Enchantment(String id, int level) {
        public Enchantment {
            Objects.requireNonNull(id, "id");
        }
    }
}
