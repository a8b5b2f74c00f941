package dev.mineclaw.core.gamefacts;

/**
 * What the server says about one item type, read without judgement (the core bounds it).
 *
 * @param key the item's namespaced key
 * @param maxStack the maximum stack size
 * @param durability the maximum damage, 0 for an item without durability
 * @param edible whether it can be eaten or drunk
 * @param fuel whether a furnace burns it
 * @param block whether it places a block
 * @param rarity the server's rarity name ({@code COMMON}...), or null when the server has none
 */
public record ItemTypeFacts(String key, int maxStack, int durability, boolean edible, boolean fuel, boolean block,
        String rarity) {}
