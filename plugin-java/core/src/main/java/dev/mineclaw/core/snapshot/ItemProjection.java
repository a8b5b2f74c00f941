package dev.mineclaw.core.snapshot;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import dev.mineclaw.core.platform.InventoryFacts;
import dev.mineclaw.core.platform.ItemFacts;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Turns {@link InventoryFacts} into the answer of {@code snapshot.item}: the slots of the mode in
 * the protocol's stable order, each as an ItemView, within the {@code max_slots} and
 * {@code max_chars} budgets, with {@code truncated} saying whether anything was left out.
 */
public final class ItemProjection {
    public static final int NAME_MAX = 128;
    public static final int ENCHANTMENTS_MAX = 16;
    public static final int AMOUNT_MAX = 127;

    /** Armour from head to feet, as the protocol lists it, with its inventory index. */
    private static final List<Map.Entry<String, Integer>> ARMOUR = List.of(
            Map.entry("helmet", InventoryFacts.HELMET),
            Map.entry("chestplate", InventoryFacts.CHESTPLATE),
            Map.entry("leggings", InventoryFacts.LEGGINGS),
            Map.entry("boots", InventoryFacts.BOOTS));
    /** Serialized as the link sends it, so the budget counts what goes on the wire. */
    private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();

    private ItemProjection() {}

    /** One slot to report: its protocol label and its inventory index. */
    record Slot(String label, int index) {}

    /**
     * The answer data.
     *
     * @param mode one of the protocol's item modes
     * @param slot the slot number for mode {@code slot} (0-40), ignored otherwise
     * @param maxSlots at most this many items
     * @param maxChars at most this many UTF-8 bytes in the compact JSON of {@code items}
     */
    public static JsonObject project(InventoryFacts inventory, String mode, int slot, int maxSlots, int maxChars) {
        JsonArray items = new JsonArray();
        int used = 2; // the brackets of the array
        boolean truncated = false;
        for (Slot wanted : slots(inventory.heldSlot(), mode, slot)) {
            ItemFacts facts = inventory.slots().get(wanted.index());
            if (facts == null || facts.amount() <= 0 || !Bounds.isKey(facts.type())) {
                continue;
            }
            if (truncated) {
                continue;
            }
            JsonObject view = view(wanted.label(), facts);
            int size = COMPACT.toJson(view).getBytes(StandardCharsets.UTF_8).length + (items.isEmpty() ? 0 : 1);
            if (items.size() >= maxSlots || used + size > maxChars) {
                truncated = true;
                continue;
            }
            items.add(view);
            used += size;
        }
        JsonObject answer = new JsonObject();
        answer.add("items", items);
        answer.addProperty("truncated", truncated);
        return answer;
    }

    /** The slots a mode reads, in the protocol's order. */
    static List<Slot> slots(int heldSlot, String mode, int slot) {
        switch (mode) {
            case "inventory" -> {
                List<Slot> all = new ArrayList<>();
                all.add(new Slot("main_hand", heldSlot));
                all.add(new Slot("off_hand", InventoryFacts.OFF_HAND));
                ARMOUR.forEach(armour -> all.add(new Slot(armour.getKey(), armour.getValue())));
                for (int index = 0; index < InventoryFacts.STORAGE_SLOTS; index++) {
                    if (index != heldSlot) {
                        all.add(new Slot(Integer.toString(index), index));
                    }
                }
                return all;
            }
            case "main_hand" -> {
                return List.of(new Slot("main_hand", heldSlot));
            }
            case "off_hand" -> {
                return List.of(new Slot("off_hand", InventoryFacts.OFF_HAND));
            }
            case "slot" -> {
                return List.of(new Slot(label(slot), slot));
            }
            default -> {
                for (Map.Entry<String, Integer> armour : ARMOUR) {
                    if (armour.getKey().equals(mode)) {
                        return List.of(new Slot(mode, armour.getValue()));
                    }
                }
                throw new IllegalArgumentException("unknown item mode '" + mode + "'");
            }
        }
    }

    /** The protocol's label of inventory index {@code index} (0-40). */
    static String label(int index) {
        if (index < 0 || index > InventoryFacts.LAST_SLOT) {
            throw new IllegalArgumentException("slot must be 0-40, got " + index);
        }
        if (index < InventoryFacts.STORAGE_SLOTS) {
            return Integer.toString(index);
        }
        if (index == InventoryFacts.OFF_HAND) {
            return "off_hand";
        }
        for (Map.Entry<String, Integer> armour : ARMOUR) {
            if (armour.getValue() == index) {
                return armour.getKey();
            }
        }
        throw new IllegalStateException("no label for slot " + index);
    }

    /** One ItemView: type, amount, the untrusted name, sorted enchantments and damage; nothing else. */
    static JsonObject view(String label, ItemFacts facts) {
        JsonObject view = new JsonObject();
        view.addProperty("slot", label);
        view.addProperty("type", facts.type());
        view.addProperty("amount", Bounds.clamp(facts.amount(), 1, AMOUNT_MAX));
        String name = Bounds.untrusted(facts.customName(), NAME_MAX);
        if (name == null) {
            view.add("custom_name", JsonNull.INSTANCE);
        } else {
            JsonObject untrusted = new JsonObject();
            untrusted.addProperty("untrusted_text", name);
            view.add("custom_name", untrusted);
        }
        JsonArray enchantments = new JsonArray();
        facts.enchantments().stream()
                .filter(enchantment -> Bounds.isKey(enchantment.id()))
                .sorted(Comparator.comparing(ItemFacts.Enchantment::id))
                .limit(ENCHANTMENTS_MAX)
                .forEach(enchantment -> {
                    JsonObject entry = new JsonObject();
                    entry.addProperty("id", enchantment.id());
                    entry.addProperty("level", Math.max(1, enchantment.level()));
                    enchantments.add(entry);
                });
        view.add("enchantments", enchantments);
        if (facts.maxDamage() <= 0) {
            view.add("damage", JsonNull.INSTANCE);
        } else {
            JsonObject damage = new JsonObject();
            damage.addProperty("current", Bounds.clamp(facts.damage(), 0, facts.maxDamage()));
            damage.addProperty("max", facts.maxDamage());
            view.add("damage", damage);
        }
        return view;
    }
}
