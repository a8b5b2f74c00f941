package dev.mineclaw.paper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import net.kyori.adventure.text.serializer.plain.PlainTextComponentSerializer;
import org.bukkit.permissions.Permission;
import org.bukkit.permissions.PermissionDefault;
import org.junit.jupiter.api.Test;
import org.mockbukkit.mockbukkit.entity.PlayerMock;

/**
 * The jar's plugin.yml, enable and disable, a bad settings file, the handshake and joins/quits,
 * on MockBukkit. What MockBukkit cannot show is covered below the adapter: Folia's regions by the
 * testkit's thread rules (ThreadRulesTest), console feedback by FeedbackCollectorTest.
 */
class PluginLifecycleTest {
    private static final Map<String, PermissionDefault> DEFAULTS = Map.ofEntries(
            Map.entry("mineclaw.command.chat", PermissionDefault.TRUE),
            Map.entry("mineclaw.command.approve", PermissionDefault.TRUE),
            Map.entry("mineclaw.command.listen", PermissionDefault.OP),
            Map.entry("mineclaw.command.reload", PermissionDefault.OP),
            Map.entry("mineclaw.command.compact", PermissionDefault.OP),
            Map.entry("mineclaw.command.clear", PermissionDefault.OP),
            Map.entry("mineclaw.command.stop", PermissionDefault.OP),
            Map.entry("mineclaw.command.model", PermissionDefault.OP),
            Map.entry("mineclaw.command.tools", PermissionDefault.OP),
            Map.entry("mineclaw.command.functions", PermissionDefault.OP),
            Map.entry("mineclaw.bypass.ratelimit", PermissionDefault.FALSE),
            Map.entry("mineclaw.tool.run_command", PermissionDefault.TRUE),
            Map.entry("mineclaw.command.private", PermissionDefault.TRUE),
            Map.entry("mineclaw.approve.console", PermissionDefault.OP),
            Map.entry("mineclaw.usage.others", PermissionDefault.OP));

    @Test
    void theDescriptorDeclaresEveryNodeWithItsDefaultAndTheOldestApi() throws Exception {
        try (PluginHarness harness = PluginHarness.unlinked("bridge-url: ws://127.0.0.1:9/link\ntoken: t\n")) {
            assertEquals("1.21.4", harness.plugin.getPluginMeta().getAPIVersion());
            assertEquals(DEFAULTS.size(), harness.plugin.getPluginMeta().getPermissions().size());
            for (Map.Entry<String, PermissionDefault> node : DEFAULTS.entrySet()) {
                Permission permission = harness.server.getPluginManager().getPermission(node.getKey());
                assertNotNull(permission, node.getKey());
                assertEquals(node.getValue(), permission.getDefault(), node.getKey());
            }
        }
    }

    @Test
    void itLinksWithTheHandshakeAndClosesTheLinkOnDisable() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            assertTrue(harness.plugin.isEnabled());
            harness.server.getPluginManager().disablePlugin(harness.plugin);
            assertFalse(harness.plugin.isEnabled());
            harness.bridge.nextClose();
        }
    }

    /**
     * bridge.managed: enabling starts the plugin's bridge manager; a step that fails is one console
     * line and the plugin stays enabled, unlinked; {@code /mineclaw bridge status} shows the state.
     * Which step fails depends on the build (a jar without the wheel, or here a Python that is not
     * there): both are the one line the owner reads.
     */
    @Test
    void aManagedBridgeThatCannotStartIsOneLineAndThePluginRunsOn() throws Exception {
        try (PluginHarness harness = PluginHarness.unlinked("bridge-url: ws://127.0.0.1:9/link\ntoken: t\n"
                + "bridge:\n  managed: true\n  python: /nonexistent/mineclaw-test/python3\n")) {
            assertTrue(harness.plugin.isEnabled());
            String line = harness.awaitLog("managed bridge not started: ");
            assertTrue(line.endsWith("; Mineclaw runs unlinked"), line);
            assertFalse(line.contains("\n"), line);
            PlayerMock owner = harness.server.addPlayer("Owner");
            owner.setOp(true);
            harness.server.dispatchCommand(owner, "mineclaw bridge status");
            harness.server.getScheduler().performTicks(2);
            String status = PlainTextComponentSerializer.plainText().serialize(owner.nextComponentMessage());
            assertTrue(status.matches("managed bridge \\S+: failed, 0 restarts"), status);
            String problem = PlainTextComponentSerializer.plainText().serialize(owner.nextComponentMessage());
            String said = "managed bridge not started: ";
            assertEquals("last problem: " + line.substring(line.indexOf(said) + said.length(),
                    line.length() - "; Mineclaw runs unlinked".length()), problem);
            assertTrue(harness.plugin.isEnabled());
        }
    }

    @Test
    void aBadSettingsFileKeepsThePluginDisabled() throws Exception {
        try (PluginHarness harness = PluginHarness.unlinked("verdict-timeout-ms: 5000\n")) {
            assertFalse(harness.plugin.isEnabled());
        }
        try (PluginHarness harness = PluginHarness.unlinked("chat-priority: MONITOR\n")) {
            assertFalse(harness.plugin.isEnabled());
        }
        try (PluginHarness harness = PluginHarness.unlinked("bridge-url: [not, a, url]\n")) {
            assertFalse(harness.plugin.isEnabled());
        }
    }

    @Test
    void joinsAndQuitsReachTheBridge() throws Exception {
        try (PluginHarness harness = PluginHarness.linked("")) {
            PlayerMock alex = harness.server.addPlayer("Alex");
            assertEquals("Alex", harness.next("player.join").frame().getAsJsonObject("data")
                    .getAsJsonObject("player").get("name").getAsString());
            alex.disconnect();
            assertEquals("Alex", harness.next("player.quit").frame().getAsJsonObject("data")
                    .getAsJsonObject("player").get("name").getAsString());
        }
    }
}
