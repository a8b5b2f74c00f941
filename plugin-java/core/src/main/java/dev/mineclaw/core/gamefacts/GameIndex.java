package dev.mineclaw.core.gamefacts;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The registries of one reading, indexed for the questions the tools ask: which recipes make an
 * item, which use it, what the item is, and which tag an ingredient's alternatives are. Built once
 * per registry stamp (see {@link GameFactsRequests}); immutable, so any thread may read it.
 */
public final class GameIndex {
    /** docs/protocol.md, NamespacedKey. */
    static final Pattern NAMESPACED_KEY = Pattern.compile("[a-z0-9_.-]{1,64}:[a-z0-9_./-]{1,191}");

    /** The order recipes are listed in: by station, vanilla's before the rest, then by key. */
    static final Comparator<RecipeFacts> ORDER = Comparator.comparing(RecipeFacts::kind)
            .thenComparing(RecipeFacts::key, NameResolver.VANILLA_FIRST);

    private final Map<String, ItemTypeFacts> items = new HashMap<>();
    private final Map<String, RecipeFacts> recipes = new HashMap<>();
    private final Map<String, List<RecipeFacts>> making = new HashMap<>();
    private final Map<String, List<RecipeFacts>> using = new HashMap<>();
    private final Map<Set<String>, String> tagOfItems = new HashMap<>();
    private final Map<String, List<String>> tagsOfItem = new HashMap<>();
    private final NameResolver names;

    private GameIndex(RegistryFacts facts) {
        Set<String> known = new HashSet<>();
        for (ItemTypeFacts item : facts.items()) {
            if (isKey(item.key())) {
                this.items.putIfAbsent(item.key(), item);
                known.add(item.key());
            }
        }
        for (RecipeFacts recipe : facts.recipes()) {
            if (!isKey(recipe.key()) || this.recipes.putIfAbsent(recipe.key(), recipe) != null) {
                continue; // a key of another shape, or a repeat: the first one read is the recipe
            }
            if (isKey(recipe.resultItem())) {
                this.making.computeIfAbsent(recipe.resultItem(), item -> new ArrayList<>()).add(recipe);
                known.add(recipe.resultItem());
            }
            Set<String> inputs = new HashSet<>();
            recipe.ingredients().forEach(ingredient -> inputs.addAll(ingredient.items()));
            for (String input : inputs) {
                if (isKey(input)) {
                    this.using.computeIfAbsent(input, item -> new ArrayList<>()).add(recipe);
                }
            }
        }
        this.making.values().forEach(list -> list.sort(ORDER));
        this.using.values().forEach(list -> list.sort(ORDER));
        Map<Set<String>, String> named = new HashMap<>();
        new TreeSet<>(facts.itemTags().keySet()).stream().filter(GameIndex::isKey)
                .sorted(Comparator.comparingInt(String::length).thenComparing(NameResolver.VANILLA_FIRST))
                .forEach(tag -> {
                    Set<String> members = Set.copyOf(facts.itemTags().get(tag));
                    if (members.size() > 1) {
                        named.putIfAbsent(members, tag); // the shortest name of a set wins
                    }
                    members.forEach(item -> this.tagsOfItem.computeIfAbsent(item, i -> new ArrayList<>()).add(tag));
                });
        this.tagOfItems.putAll(named);
        this.tagsOfItem.values().forEach(list -> list.sort(NameResolver.VANILLA_FIRST));
        this.names = new NameResolver(known);
    }

    /** The index of {@code facts}; keys of another shape and repeated recipe keys are left out. */
    public static GameIndex of(RegistryFacts facts) {
        return new GameIndex(facts);
    }

    static boolean isKey(String key) {
        return key != null && NAMESPACED_KEY.matcher(key).matches();
    }

    NameResolver.Resolution resolve(String query) {
        return this.names.resolve(query);
    }

    /** The recipe of that key, or null. */
    RecipeFacts recipe(String key) {
        return this.recipes.get(key);
    }

    boolean isItem(String key) {
        return this.names.knows(key);
    }

    /** The recipes whose result is {@code item}, in {@link #ORDER}. */
    List<RecipeFacts> making(String item) {
        return this.making.getOrDefault(item, List.of());
    }

    /** The recipes that accept {@code item} in any input, in {@link #ORDER}. */
    List<RecipeFacts> using(String item) {
        return this.using.getOrDefault(item, List.of());
    }

    ItemTypeFacts item(String key) {
        return this.items.get(key);
    }

    /** The tags holding {@code item}, vanilla's first. */
    List<String> tagsOf(String item) {
        return this.tagsOfItem.getOrDefault(item, List.of());
    }

    int recipeCount() {
        return this.recipes.size();
    }

    /**
     * An ingredient's alternatives as names: the one tag that holds exactly them
     * ({@code #minecraft:planks}), or the item keys themselves, without repeats, in the server's
     * order. Keys of another shape are left out.
     */
    List<String> choiceNames(List<String> alternatives) {
        Set<String> distinct = new LinkedHashSet<>();
        for (String item : alternatives) {
            if (isKey(item)) {
                distinct.add(item);
            }
        }
        if (distinct.size() > 1) {
            String tag = this.tagOfItems.get(Set.copyOf(distinct));
            if (tag != null) {
                return List.of("#" + tag);
            }
        }
        return List.copyOf(distinct);
    }
}
