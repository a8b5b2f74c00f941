package dev.mineclaw.core.gamefacts;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One reading of the server's registries: every item type, every recipe and every item tag
 * (by tag key, the item keys it holds). Immutable once made.
 */
public record RegistryFacts(List<ItemTypeFacts> items, List<RecipeFacts> recipes, Map<String, Set<String>> itemTags) {
    public RegistryFacts {
        items = List.copyOf(items);
        recipes = List.copyOf(recipes);
        itemTags = Map.copyOf(itemTags);
    }
}
