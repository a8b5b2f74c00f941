package dev.mineclaw.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.mineclaw.core.gamefacts.RecipeFacts;
import dev.mineclaw.testkit.ControlLoop.BadCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code recipe.add} and {@code registry.reload}: a recipe is added raw, a bad shape is named, the registry is read on the global thread only. */
class TestkitRegistryTest {
    private final List<String> violations = new ArrayList<>();
    private final ThreadRules rules = new ThreadRules(this.violations::add);
    private final TestkitRegistry registry = new TestkitRegistry(this.rules);

    private static JsonObject op(String json) {
        return JsonParser.parseString(json).getAsJsonObject();
    }

    private RecipeFacts.Kind readOnGlobal(String key) throws Exception {
        var global = Executors.newSingleThreadExecutor();
        try {
            CompletableFuture<RecipeFacts.Kind> kind = CompletableFuture.supplyAsync(() -> {
                this.rules.globalThread(Thread.currentThread());
                return this.registry.read().recipes().stream().filter(r -> r.key().equals(key))
                        .map(RecipeFacts::kind).findFirst().orElse(null);
            }, global);
            return kind.get(30, TimeUnit.SECONDS);
        } finally {
            global.shutdownNow();
        }
    }

    @Test
    void anAddedRecipeIsReadWithTheRestAndMovesTheStamp() throws Exception {
        long before = this.registry.stamp();
        this.registry.add(op("{\"op\":\"recipe.add\",\"key\":\"myplugin:star_beacon\",\"kind\":\"shapeless\","
                + "\"result\":\"minecraft:beacon\",\"count\":2,\"ingredients\":[{\"items\":[\"minecraft:nether_star\"]}]}"));
        assertTrue(this.registry.stamp() > before);
        assertEquals(RecipeFacts.Kind.SHAPELESS, readOnGlobal("myplugin:star_beacon"));
        assertEquals(RecipeFacts.Kind.SHAPED, readOnGlobal("minecraft:beacon"));
        long added = this.registry.stamp();
        this.registry.reload();
        assertTrue(this.registry.stamp() > added);
        assertEquals(List.of(), this.violations);
    }

    @Test
    void readingOffTheGlobalThreadBreaksTheThreadRules() {
        assertThrows(RuntimeException.class, this.registry::read);
        assertEquals(1, this.violations.size());
    }

    @Test
    void aBadRecipeIsNamedAndNothingIsAdded() {
        long before = this.registry.stamp();
        for (String[] bad : List.of(
                new String[] {"{\"key\":\"a:b\"}", "kind is required"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"brewing\"}", "unknown kind 'brewing'"},
                new String[] {"{\"key\":7,\"kind\":\"shaped\"}", "key must be a string"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"shaped\",\"count\":\"two\"}", "count must be a number"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"smelting\",\"cook_ticks\":[]}", "cook_ticks must be a number"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"shaped\",\"shape\":\"###\"}", "shape must be an array"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"shaped\",\"ingredients\":{}}", "ingredients must be an array"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"shaped\",\"ingredients\":[1]}", "ingredients[0] must be an object"},
                new String[] {"{\"key\":\"a:b\",\"kind\":\"shaped\",\"ingredients\":[{\"items\":[1]}]}",
                        "items must be an array of strings"})) {
            BadCommand refused = assertThrows(BadCommand.class, () -> this.registry.add(op(bad[0])), bad[0]);
            assertTrue(refused.getMessage().contains(bad[1]), refused.getMessage());
        }
        assertEquals(before, this.registry.stamp());
    }
}
