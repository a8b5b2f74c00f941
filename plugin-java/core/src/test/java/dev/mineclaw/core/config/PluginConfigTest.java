package dev.mineclaw.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mineclaw.core.CoreSettings;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginConfigTest {
    @TempDir
    Path dataFolder;

    @Test
    void anEmptyFileGivesTheDocumentedDefaults() {
        PluginConfig config = PluginConfig.fromMap(Map.of(), this.dataFolder);
        assertEquals(URI.create("ws://127.0.0.1:25580/link"), config.bridgeUrl());
        assertEquals("", config.token());
        assertEquals(this.dataFolder.resolve("link.token"), config.tokenFile());
        assertEquals(Duration.ofMillis(250), config.verdictTimeout());
        assertEquals("HIGH", config.chatPriority());
    }

    @Test
    void bridgeUrlMayListSeveralBridgesTriedInOrder() {
        PluginConfig config = PluginConfig.fromMap(Map.of("bridge-url",
                java.util.List.of("ws://10.0.0.1:25580/link", "ws://10.0.0.2:25580/link")), this.dataFolder);
        assertEquals(java.util.List.of(URI.create("ws://10.0.0.1:25580/link"), URI.create("ws://10.0.0.2:25580/link")),
                config.bridgeUrls());
        assertEquals(config.bridgeUrls(), config.coreSettings(UUID.randomUUID()).link().urls());
        assertKey("bridge-url", Map.of("bridge-url", java.util.List.of()));
        assertKey("bridge-url", Map.of("bridge-url", java.util.List.of("ws://a/link", "ws://a/link")));
        assertKey("bridge-url", Map.of("bridge-url", java.util.List.of("ws://a/link", "http://b/link")));
        assertKey("bridge-url", Map.of("bridge-url", java.util.List.of("ws://a/link", 3)));
        assertKey("bridge-url", Map.of("bridge-url", java.util.Collections.nCopies(9, "ws://a/link")));
        assertKey("bridge-url", Map.of("bridge-url", 3));
    }

    @Test
    void theServerIdNamesAServerOfTheBridgesServersYml() {
        assertEquals("", PluginConfig.fromMap(Map.of(), this.dataFolder).serverId());
        PluginConfig config = PluginConfig.fromMap(Map.of("server-id", " lobby-2 "), this.dataFolder);
        assertEquals("lobby-2", config.serverId());
        assertEquals("lobby-2", config.coreSettings(UUID.randomUUID()).serverId());
        assertKey("server-id", Map.of("server-id", "Lobby"));
        assertKey("server-id", Map.of("server-id", "-lobby"));
        assertKey("server-id", Map.of("server-id", "x".repeat(33)));
        assertKey("server-id", Map.of("server-id", "default"));
        assertKey("server-id", Map.of("server-id", 3));
    }

    @Test
    void theChatPriorityIsOneThatMayChangeTheEvent() {
        assertEquals("HIGHEST", PluginConfig.fromMap(Map.of("chat-priority", "highest"), this.dataFolder).chatPriority());
        assertEquals("LOWEST", PluginConfig.fromMap(Map.of("chat-priority", "LOWEST"), this.dataFolder).chatPriority());
        assertKey("chat-priority", Map.of("chat-priority", "MONITOR"));
        assertKey("chat-priority", Map.of("chat-priority", "soon"));
        assertKey("chat-priority", Map.of("chat-priority", 3));
    }

    @Test
    void valuesAreReadAndTheTokenFileIsResolvedAgainstTheDataFolder() {
        PluginConfig config = PluginConfig.fromMap(Map.of(
                "bridge-url", "wss://bridge.example:9000/link",
                "token", "  secret  ",
                "token-file", "sub/../other.token",
                "verdict-timeout-ms", 400), this.dataFolder);
        assertEquals(URI.create("wss://bridge.example:9000/link"), config.bridgeUrl());
        assertEquals("secret", config.token());
        assertEquals(this.dataFolder.resolve("other.token"), config.tokenFile());
        assertEquals(Duration.ofMillis(400), config.verdictTimeout());
    }

    @Test
    void aNullTokenAsYamlWritesAnEmptyValueMeansReadTheFile() throws Exception {
        Map<String, Object> values = new HashMap<>();
        values.put("token", null);
        Files.writeString(this.dataFolder.resolve("link.token"), "from-file\n", StandardCharsets.UTF_8);
        CoreSettings settings = PluginConfig.fromMap(values, this.dataFolder).coreSettings(UUID.randomUUID());
        assertEquals("from-file", settings.tokens().token());
    }

    @Test
    void coreSettingsCarryTheUrlAndVerdictTimeout() {
        UUID instance = UUID.randomUUID();
        CoreSettings settings = PluginConfig.fromMap(Map.of("token", "t", "verdict-timeout-ms", 100L), this.dataFolder)
                .coreSettings(instance);
        assertEquals(instance, settings.instanceId());
        assertEquals(Duration.ofMillis(100), settings.verdictTimeout());
        assertEquals(URI.create(PluginConfig.DEFAULT_URL), settings.link().url());
        assertEquals("t", settings.tokens().token());
    }

    @Test
    void anUnknownKeyIsNamed() {
        ConfigException error = assertThrows(ConfigException.class,
                () -> PluginConfig.fromMap(Map.of("bridge-ulr", "ws://x"), this.dataFolder));
        assertEquals("bridge-ulr", error.key());
        assertTrue(error.getMessage().contains("known keys"), error.getMessage());
    }

    @Test
    void aUrlThatIsNotWebSocketIsRefused() {
        assertKey("bridge-url", Map.of("bridge-url", "http://127.0.0.1:25580/link"));
        assertKey("bridge-url", Map.of("bridge-url", "ws://"));
        assertKey("bridge-url", Map.of("bridge-url", "ws://bad host/"));
        assertKey("bridge-url", Map.of("bridge-url", 25580));
    }

    @Test
    void aVerdictTimeoutOutOfRangeOrNotWholeIsRefused() {
        assertKey("verdict-timeout-ms", Map.of("verdict-timeout-ms", 0));
        assertKey("verdict-timeout-ms", Map.of("verdict-timeout-ms", -5));
        assertKey("verdict-timeout-ms", Map.of("verdict-timeout-ms", 2001));
        assertKey("verdict-timeout-ms", Map.of("verdict-timeout-ms", 2.5));
        assertKey("verdict-timeout-ms", Map.of("verdict-timeout-ms", "250"));
    }

    @Test
    void theLinkTimeoutBoundsSilenceAndHandshakeAndDefaultsToFiveSeconds() {
        CoreSettings fallback = PluginConfig.fromMap(Map.of("token", "t"), this.dataFolder)
                .coreSettings(UUID.randomUUID());
        assertEquals(Duration.ofSeconds(5), fallback.link().silenceTimeout());
        assertEquals(Duration.ofSeconds(5), fallback.link().handshakeTimeout());
        CoreSettings given = PluginConfig.fromMap(Map.of("token", "t", "link-timeout-ms", 1500), this.dataFolder)
                .coreSettings(UUID.randomUUID());
        assertEquals(Duration.ofMillis(1500), given.link().silenceTimeout());
        assertEquals(Duration.ofMillis(500), given.link().pingInterval());
    }

    @Test
    void aLinkTimeoutOutOfRangeOrNotWholeIsRefused() {
        assertKey("link-timeout-ms", Map.of("link-timeout-ms", 999));
        assertKey("link-timeout-ms", Map.of("link-timeout-ms", 60001));
        assertKey("link-timeout-ms", Map.of("link-timeout-ms", 2.5));
        assertKey("link-timeout-ms", Map.of("link-timeout-ms", "5000"));
    }

    @Test
    void aBlankOrInvalidTokenFileIsRefused() {
        assertKey("token-file", Map.of("token-file", "  "));
        assertKey("token-file", Map.of("token-file", "bad\u0000name"));
        assertKey("token", Map.of("token", 12345));
    }

    @Test
    void aMissingTokenFileIsReportedWhenTheTokenIsNeededNotAtLoad() {
        CoreSettings settings = PluginConfig.fromMap(Map.of(), this.dataFolder).coreSettings(UUID.randomUUID());
        RuntimeException error = assertThrows(RuntimeException.class, () -> settings.tokens().token());
        assertTrue(error.getMessage().contains("link.token"), error.getMessage());
    }

    private void assertKey(String key, Map<String, ?> values) {
        ConfigException error = assertThrows(ConfigException.class, () -> PluginConfig.fromMap(values, this.dataFolder));
        assertEquals(key, error.key(), error.getMessage());
        assertTrue(error.getMessage().startsWith("plugin-link.yml: " + key + ": "), error.getMessage());
    }

    @Test
    void theLocaleAndTheOwnersLinesReachTheCore() {
        PluginConfig config = PluginConfig.fromMap(Map.of("locale", "zh_CN",
                "messages", Map.of("chat.ai-prefix", "<gold>[Bot]</gold> ")), this.dataFolder);
        assertEquals("zh_CN", config.locale());
        CoreSettings settings = config.coreSettings(UUID.randomUUID());
        assertEquals("zh_CN", settings.locale());
        assertEquals(Map.of("chat.ai-prefix", "<gold>[Bot]</gold> "), settings.messages());
        assertEquals("en", PluginConfig.fromMap(Map.of(), this.dataFolder).locale());
    }

    @Test
    void aBadLocaleOrMessageIsNamedWithItsKey() {
        ConfigException locale = assertThrows(ConfigException.class,
                () -> PluginConfig.fromMap(Map.of("locale", "fr"), this.dataFolder));
        assertEquals("locale", locale.key());
        ConfigException unknown = assertThrows(ConfigException.class,
                () -> PluginConfig.fromMap(Map.of("messages", Map.of("chat.prefix", "x")), this.dataFolder));
        assertEquals("messages.chat.prefix", unknown.key());
        ConfigException click = assertThrows(ConfigException.class, () -> PluginConfig.fromMap(
                Map.of("messages", Map.of("assistant.offline", "<click:run_command:/op>x")), this.dataFolder));
        assertEquals("messages.assistant.offline", click.key());
        assertTrue(click.getMessage().contains("click"), click.getMessage());
        ConfigException notText = assertThrows(ConfigException.class,
                () -> PluginConfig.fromMap(Map.of("messages", Map.of("command.timeout", 5)), this.dataFolder));
        assertEquals("messages.command.timeout", notText.key());
        ConfigException notMap = assertThrows(ConfigException.class,
                () -> PluginConfig.fromMap(Map.of("messages", "x"), this.dataFolder));
        assertEquals("messages", notMap.key());
    }

    @Test
    void theManagedBridgeIsOffByDefault() {
        PluginConfig config = PluginConfig.fromMap(Map.of(), this.dataFolder);
        assertEquals(false, config.managed().enabled());
        assertTrue(config.managedSettings(this.dataFolder).isEmpty());
    }

    @Test
    void theBridgeSectionTurnsTheManagedBridgeOnWithItsHostPortPythonAndWheelhouse() {
        PluginConfig config = PluginConfig.fromMap(Map.of("bridge-url", "ws://127.0.0.1:25611/link",
                "bridge", Map.of("managed", true, "python", "/opt/python3.12/bin/python3", "wheelhouse", "wheels")),
                this.dataFolder);
        var settings = config.managedSettings(this.dataFolder).orElseThrow();
        assertEquals("127.0.0.1", settings.host());
        assertEquals(25611, settings.port());
        assertEquals("/opt/python3.12/bin/python3", settings.python());
        assertEquals(this.dataFolder.resolve("wheels"), settings.wheelhouse());
        assertEquals(this.dataFolder.resolve("managed/venv"), settings.venv());
        PluginConfig defaults = PluginConfig.fromMap(Map.of("bridge", Map.of("managed", true)), this.dataFolder);
        assertEquals(this.dataFolder.resolve("wheelhouse"), defaults.managed().wheelhouse());
        assertEquals("", defaults.managed().python());
    }

    @Test
    void aBadBridgeSectionIsNamedByItsKey() {
        assertKey("bridge", Map.of("bridge", "managed"));
        assertKey("bridge.managed", Map.of("bridge", Map.of("managed", "yes")));
        assertKey("bridge.python", Map.of("bridge", Map.of("python", 3.12)));
        assertKey("bridge.pyton", Map.of("bridge", Map.of("pyton", "/usr/bin/python3")));
        assertKey("bridge.managed", Map.of("bridge-url", "wss://example.org/link", "bridge", Map.of("managed", true)));
    }
}
