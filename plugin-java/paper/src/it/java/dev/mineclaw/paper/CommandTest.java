package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.papermc.paper.command.brigadier.CommandSourceStack;
import java.lang.reflect.Proxy;
import java.util.List;
import net.kyori.adventure.text.Component;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.command.BlockCommandSender;
import org.bukkit.command.CommandSender;
import org.bukkit.command.RemoteConsoleCommandSender;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * /mineclaw through Paper's Brigadier registration in MockBukkit. Not shown here, because
 * MockBukkit cannot: the console and RCON senders' answers (the core's CommandForwarderTest covers
 * console answers) and the client-side completion tree (suggest() is exercised directly).
 */
class CommandTest {
    @Test
    void aPlayersCommandIsForwardedWithTheirPermissions() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            harness.server.dispatchCommand(steve, "mineclaw status");
            JsonObject data = harness.next("command").frame().getAsJsonObject("data");
            JsonArray args = data.getAsJsonArray("args");
            assertEquals("[\"status\"]", args.toString());
        }
    }

    /** Brigadier answered a non-OP with "Incorrect argument"; the core's permission line is right. */
    @Test
    void aSubcommandWithoutItsNodeGetsThePermissionLineNotASyntaxError() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            steve.setOp(false);
            harness.server.dispatchCommand(steve, "mineclaw reload");
            harness.server.getScheduler().performTicks(2);
            Component line = steve.nextComponentMessage();
            assertNotNull(line, "no answer");
            String text = PlainTextComponentSerializer.plainText().serialize(line);
            assertTrue(text.contains("mineclaw.command.reload"), text);
        }
    }

    /** A command source for {@code sender}, as Paper hands one to the command. */
    private static CommandSourceStack source(CommandSender sender) {
        return (CommandSourceStack) Proxy.newProxyInstance(CommandTest.class.getClassLoader(),
                new Class<?>[] {CommandSourceStack.class}, (proxy, method, args) -> {
                    if ("getSender".equals(method.getName())) {
                        return sender;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A sender of a kind MockBukkit has no class for (RCON, a command block). */
    private static CommandSender sender(Class<? extends CommandSender> kind) {
        return kind.cast(Proxy.newProxyInstance(CommandTest.class.getClassLoader(), new Class<?>[] {kind},
                (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                }));
    }

    @Test
    void suggestionsListOnlyTheSubcommandsTheSenderMayUse() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock steve = harness.server.addPlayer("Steve");
            steve.setOp(false);
            PlayerMock alex = harness.server.addPlayer("Alex");
            alex.setOp(true);
            MineclawCommand command = new MineclawCommand(null);
            // stop: the asker of the running turn may stop it, which only the bridge knows; ai: everyone's.
            // help, usage and retry (one's own failed question) are open; listen is offered to every
            // player for ignore-me / include-me only.
            // memory: every player's own memories (another's need mineclaw.memory.others, checked by the bridge).
            assertEquals(List.of("status", "help", "usage", "retry", "memory", "listen", "stop", "approve", "deny", "ai"),
                    List.copyOf(command.suggest(source(steve), new String[0])));
            assertEquals(List.of("list", "server", "conversations", "share", "unshare", "forget"),
                    List.copyOf(command.suggest(source(steve), new String[] {"memory", ""})));
            assertEquals(List.of("share"), List.copyOf(command.suggest(source(steve), new String[] {"memory", "sh"})));
            // /mineclaw ai is /ai: the same first words (it completed nothing).
            assertEquals(List.of("switch", "stop"), List.copyOf(command.suggest(source(steve), new String[] {"ai", "s"})));
            assertEquals(List.of(), List.copyOf(command.suggest(source(steve), new String[] {"ai", "switch", ""})));
            assertEquals(List.of("retry", "reload"),
                    List.copyOf(command.suggest(source(alex), new String[] {"re"})));
            assertEquals(List.of("retry"), List.copyOf(command.suggest(source(steve), new String[] {"re"})));
            assertEquals(List.of("on", "off", "status", "why", "ignore-me", "include-me"),
                    List.copyOf(command.suggest(source(alex), new String[] {"listen", ""})));
            assertEquals(List.of("ignore-me", "include-me"),
                    List.copyOf(command.suggest(source(steve), new String[] {"listen", ""})));
            assertEquals(List.of("list", "default"), List.copyOf(command.suggest(source(alex), new String[] {"model", ""})));
            assertEquals(List.of(), List.copyOf(command.suggest(source(steve), new String[] {"model", ""})));
            assertTrue(command.canUse(steve));
            assertTrue(command.canUse(harness.server.getConsoleSender()));
            // RCON could not use /mineclaw; command blocks still may not speak for the console.
            assertTrue(command.canUse(sender(RemoteConsoleCommandSender.class)));
            assertFalse(command.canUse(sender(BlockCommandSender.class)));
            // A private conversation belongs to one player: /ai is for players alone.
            AiCommand ai = new AiCommand(null);
            assertTrue(ai.canUse(steve));
            assertFalse(ai.canUse(harness.server.getConsoleSender()));
            assertFalse(ai.canUse(sender(RemoteConsoleCommandSender.class)));
            // /ai completes its command words (the conversation ids live on the bridge), only
            // the first word, and persona only for a holder of mineclaw.persona.
            assertEquals(List.of("new", "list", "switch", "rename", "delete", "history", "clear", "stop"),
                    List.copyOf(ai.suggest(source(steve), new String[0])));
            assertEquals(List.of("switch", "stop"), List.copyOf(ai.suggest(source(steve), new String[] {"S"})));
            assertEquals(List.of("persona"), List.copyOf(ai.suggest(source(alex), new String[] {"pe"}))); // an op
            assertEquals(List.of(), List.copyOf(ai.suggest(source(steve), new String[] {"pe"})));
            steve.addAttachment(harness.plugin, "mineclaw.persona", true);
            assertEquals(List.of("persona"), List.copyOf(ai.suggest(source(steve), new String[] {"pe"})));
            assertEquals(List.of(), List.copyOf(ai.suggest(source(steve), new String[] {"switch", ""})));
            // A player who may not use /ai at all is offered nothing (the core answers with the permission line).
            steve.addAttachment(harness.plugin, "mineclaw.command.private", false);
            assertEquals(List.of(), List.copyOf(ai.suggest(source(steve), new String[0])));
            assertEquals(List.of(), List.copyOf(ai.suggest(source(steve), new String[] {"n"})));
        }
    }
}
