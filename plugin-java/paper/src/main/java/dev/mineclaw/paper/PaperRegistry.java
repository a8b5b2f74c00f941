package dev.mineclaw.paper;

import dev.mineclaw.core.gamefacts.GameRegistry;
import dev.mineclaw.core.gamefacts.ItemTypeFacts;
import dev.mineclaw.core.gamefacts.RecipeFacts;
import dev.mineclaw.core.gamefacts.RegistryFacts;
import io.papermc.paper.event.server.ServerResourcesReloadedEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.bukkit.Keyed;
import org.bukkit.Material;
import org.bukkit.Server;
import org.bukkit.Tag;
import org.bukkit.event.EventHandler;
import org.bukkit.event.EventPriority;
import org.bukkit.event.Listener;
import org.bukkit.event.server.PluginDisableEvent;
import org.bukkit.event.server.PluginEnableEvent;
import org.bukkit.event.server.ServerLoadEvent;
import org.bukkit.inventory.BlastingRecipe;
import org.bukkit.inventory.CampfireRecipe;
import org.bukkit.inventory.CookingRecipe;
import org.bukkit.inventory.ItemStack;
import org.bukkit.inventory.Recipe;
import org.bukkit.inventory.RecipeChoice;
import org.bukkit.inventory.ShapedRecipe;
import org.bukkit.inventory.ShapelessRecipe;
import org.bukkit.inventory.SmithingRecipe;
import org.bukkit.inventory.SmithingTransformRecipe;
import org.bukkit.inventory.SmithingTrimRecipe;
import org.bukkit.inventory.SmokingRecipe;
import org.bukkit.inventory.StonecuttingRecipe;

/**
 * The server's item types, recipes and item tags as the core's {@link GameRegistry}: Bukkit's
 * recipe iterator, {@link Material} and the item tag registry, read as they are, on the global
 * region (the core schedules it there). The stamp moves on the events after which the registries
 * may differ: the server's (re)load, a datapack reload, a plugin enabled or disabled (plugins add
 * their recipes when they are enabled). Every API used is in paper-api 1.21.4 to 26.2.
 */
final class PaperRegistry implements GameRegistry, Listener {
    private final Server server;
    private final Logger logger;
    private final AtomicLong stamp = new AtomicLong(1);

    PaperRegistry(Server server, Logger logger) {
        this.server = server;
        this.logger = logger;
    }

    @Override
    public long stamp() {
        return this.stamp.get();
    }

    /** The registries may have changed; the next lookup reads them again. */
    void changed() {
        this.stamp.incrementAndGet();
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onServerLoad(ServerLoadEvent event) {
        changed();
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onResourcesReloaded(ServerResourcesReloadedEvent event) {
        changed();
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onPluginEnable(PluginEnableEvent event) {
        changed();
    }

    @EventHandler(priority = EventPriority.MONITOR)
    public void onPluginDisable(PluginDisableEvent event) {
        changed();
    }

    @Override
    public RegistryFacts read() {
        List<ItemTypeFacts> items = new ArrayList<>();
        for (Material material : Material.values()) {
            if (!material.isLegacy() && material.isItem() && !material.isAir()) {
                items.add(item(material));
            }
        }
        List<RecipeFacts> recipes = new ArrayList<>();
        Iterator<Recipe> iterator = this.server.recipeIterator();
        while (iterator.hasNext()) {
            Recipe recipe;
            try {
                recipe = iterator.next();
            } catch (RuntimeException exc) {
                // A recipe Bukkit cannot express (some modded or special ones): the rest still count.
                this.logger.log(Level.FINE, "a recipe could not be read", exc);
                continue;
            }
            RecipeFacts facts = recipe(recipe);
            if (facts != null) {
                recipes.add(facts);
            }
        }
        return new RegistryFacts(items, recipes, itemTags());
    }

    private static ItemTypeFacts item(Material material) {
        String rarity;
        try {
            rarity = material.getItemRarity().name();
        } catch (RuntimeException exc) {
            rarity = null; // a server (or a test server) without item rarities
        }
        return new ItemTypeFacts(material.getKey().toString(), material.getMaxStackSize(),
                material.getMaxDurability(), material.isEdible(), material.isFuel(), material.isBlock(), rarity);
    }

    private Map<String, Set<String>> itemTags() {
        Map<String, Set<String>> tags = new HashMap<>();
        try {
            for (Tag<Material> tag : this.server.getTags(Tag.REGISTRY_ITEMS, Material.class)) {
                Set<String> members = new HashSet<>();
                tag.getValues().forEach(material -> members.add(material.getKey().toString()));
                tags.put(tag.getKey().toString(), members);
            }
        } catch (RuntimeException exc) {
            this.logger.log(Level.FINE, "the item tags could not be read", exc);
        }
        return tags;
    }

    /** One recipe as the core's facts, or null for one without a key. */
    static RecipeFacts recipe(Recipe recipe) {
        if (!(recipe instanceof Keyed keyed)) {
            return null;
        }
        String key = keyed.getKey().toString();
        ItemStack made = recipe.getResult();
        String result = made == null || made.getType().isAir() ? null : made.getType().getKey().toString();
        int count = made == null ? 0 : made.getAmount();
        if (recipe instanceof ShapedRecipe shaped) {
            List<RecipeFacts.Ingredient> keyedInputs = new ArrayList<>();
            shaped.getChoiceMap().forEach((symbol, choice) ->
                    keyedInputs.add(new RecipeFacts.Ingredient(symbol.toString(), items(choice))));
            return RecipeFacts.shaped(key, result, count, List.of(shaped.getShape()), keyedInputs);
        }
        if (recipe instanceof ShapelessRecipe shapeless) {
            return RecipeFacts.shapeless(key, result, count,
                    shapeless.getChoiceList().stream().map(PaperRegistry::items).toList());
        }
        if (recipe instanceof CookingRecipe<?> cooking) {
            return RecipeFacts.single(key, cookingKind(cooking), result, count, items(cooking.getInputChoice()),
                    cooking.getCookingTime(), cooking.getExperience());
        }
        if (recipe instanceof StonecuttingRecipe cutting) {
            return RecipeFacts.single(key, RecipeFacts.Kind.STONECUTTING, result, count,
                    items(cutting.getInputChoice()), -1, 0);
        }
        if (recipe instanceof SmithingRecipe smithing) {
            List<String> template = recipe instanceof SmithingTransformRecipe transform
                    ? items(transform.getTemplate())
                    : recipe instanceof SmithingTrimRecipe trim ? items(trim.getTemplate()) : List.of();
            boolean trims = recipe instanceof SmithingTrimRecipe;
            return RecipeFacts.smithing(key, trims ? RecipeFacts.Kind.SMITHING_TRIM
                    : RecipeFacts.Kind.SMITHING_TRANSFORM, trims ? null : result, template,
                    items(smithing.getBase()), items(smithing.getAddition()));
        }
        return new RecipeFacts(key, RecipeFacts.Kind.OTHER, result, count, List.of(), List.of(), -1, 0);
    }

    private static RecipeFacts.Kind cookingKind(CookingRecipe<?> cooking) {
        if (cooking instanceof BlastingRecipe) {
            return RecipeFacts.Kind.BLASTING;
        }
        if (cooking instanceof SmokingRecipe) {
            return RecipeFacts.Kind.SMOKING;
        }
        return cooking instanceof CampfireRecipe ? RecipeFacts.Kind.CAMPFIRE : RecipeFacts.Kind.SMELTING;
    }

    /** The item keys a choice accepts, in its order; empty for a choice Bukkit cannot list. */
    private static List<String> items(RecipeChoice choice) {
        if (choice instanceof RecipeChoice.MaterialChoice materials) {
            return materials.getChoices().stream().map(material -> material.getKey().toString()).toList();
        }
        if (choice instanceof RecipeChoice.ExactChoice exact) {
            return exact.getChoices().stream().map(stack -> stack.getType().getKey().toString()).toList();
        }
        return List.of();
    }
}
