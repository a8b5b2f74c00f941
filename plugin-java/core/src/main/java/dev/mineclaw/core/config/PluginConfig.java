package dev.mineclaw.core.config;

import dev.mineclaw.core.CoreSettings;
import dev.mineclaw.core.link.LinkSettings;
import dev.mineclaw.core.link.TokenSource;
import dev.mineclaw.core.text.Messages;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The plugin's own config file, {@value #FILE_NAME}: only how to reach the bridge and how long chat may wait. Every
 * decision lives in the bridge. Immutable; read with {@link #fromMap}.
 *
 * @param bridgeUrls the bridge's link endpoint ({@value #DEFAULT_URL} by default), or several
 *     bridges of a network in the order they are tried (the plugin moves to the next when one goes
 *     away or does not serve this server)
 * @param token the shared token, or empty to read {@code tokenFile}
 * @param tokenFile the bridge's {@code link.token}; relative paths are resolved against the
 *     plugin's data folder, which is the folder the bridge is started with ({@code serve --config})
 * @param verdictTimeout how long a chat message may wait for its verdict (250 ms by default)
 * @param chatPriority the chat listener's event priority, one of {@link #CHAT_PRIORITIES}
 *     ({@value #DEFAULT_CHAT_PRIORITY} by default): later than mute and anti-spam plugins, earlier
 *     than chat formatters that replace the renderer
 * @param serverId this server's id in the bridge's {@code servers.yml}, or empty for the bridge's
 *     default server (the one of {@code link.token})
 * @param locale the shipped set of the plugin's own lines, one of {@link Messages#LOCALES}
 *     ({@code en} by default)
 * @param messages the owner's own lines over that set, key to MiniMessage template
 * @param linkTimeout how long a bridge may stay silent (linking, or linked and not answering
 *     pings) before the plugin gives it up and tries its next bridge ({@value #DEFAULT_LINK_TIMEOUT_MS} ms by
 *     default, {@value #MIN_LINK_TIMEOUT_MS}-{@value #MAX_LINK_TIMEOUT_MS})
 * @param managed the {@code bridge} section: whether the plugin runs its own bridge, with what Python
 *     and which wheelhouse (off by default)
 */
public record PluginConfig(List<URI> bridgeUrls, String token, Path tokenFile, Duration verdictTimeout,
        String chatPriority, String serverId, String locale, Map<String, String> messages, Duration linkTimeout,
        ManagedBridgeConfig managed) {
    public PluginConfig {
        messages = Map.copyOf(messages);
    }
    /**
     * Not {@code config.yml}: the plugin's folder is also the bridge's config folder, where
     * {@code config.yml} is the bridge's.
     */
    public static final String FILE_NAME = "plugin-link.yml";
    public static final String DEFAULT_URL = "ws://127.0.0.1:25580/link";
    public static final String DEFAULT_TOKEN_FILE = "link.token";
    /** Chat waits at most this long whatever the file says: a slow bridge must not stall chat. */
    public static final long MAX_VERDICT_TIMEOUT_MS = 2000;
    /** MONITOR is left out: the listener changes the event, which MONITOR listeners must not. */
    public static final List<String> CHAT_PRIORITIES = List.of("LOWEST", "LOW", "NORMAL", "HIGH", "HIGHEST");
    public static final String DEFAULT_CHAT_PRIORITY = "HIGH";
    public static final long DEFAULT_LINK_TIMEOUT_MS = 5000;
    public static final long MIN_LINK_TIMEOUT_MS = 1000;
    public static final long MAX_LINK_TIMEOUT_MS = 60000;

    static final String BRIDGE_URL = "bridge-url";
    static final String TOKEN = "token";
    static final String TOKEN_FILE = "token-file";
    static final String VERDICT_TIMEOUT_MS = "verdict-timeout-ms";
    static final String CHAT_PRIORITY = "chat-priority";
    static final String SERVER_ID = "server-id";
    static final String LOCALE = "locale";
    static final String MESSAGES = "messages";
    static final String LINK_TIMEOUT_MS = "link-timeout-ms";
    static final String BRIDGE = "bridge";
    /** The bridge's pattern for a server id ({@code servers.yml}, {@code hello.server_id}). */
    static final Pattern SERVER_ID_PATTERN = Pattern.compile("[a-z0-9][a-z0-9_-]{0,31}");
    private static final Set<String> KEYS = Set.of(BRIDGE_URL, TOKEN, TOKEN_FILE, VERDICT_TIMEOUT_MS, CHAT_PRIORITY,
            SERVER_ID, LOCALE, MESSAGES, LINK_TIMEOUT_MS, BRIDGE);

    /**
     * Reads the top-level values of the config file; absent keys take their defaults.
     *
     * @param dataFolder the plugin's data folder, against which a relative token file is resolved
     * @throws ConfigException naming the first bad key
     */
    public static PluginConfig fromMap(Map<String, ?> values, Path dataFolder) {
        for (String key : new TreeSet<>(values.keySet())) {
            if (!KEYS.contains(key)) {
                throw new ConfigException(key, "unknown key; known keys are " + new TreeSet<>(KEYS));
            }
        }
        List<URI> urls = urls(values.get(BRIDGE_URL));
        String token = string(values, TOKEN, "").strip();
        Path tokenFile = path(string(values, TOKEN_FILE, DEFAULT_TOKEN_FILE), dataFolder);
        Duration verdict = Duration.ofMillis(verdictMillis(values.get(VERDICT_TIMEOUT_MS)));
        String priority = string(values, CHAT_PRIORITY, DEFAULT_CHAT_PRIORITY).strip().toUpperCase(Locale.ROOT);
        if (!CHAT_PRIORITIES.contains(priority)) {
            throw new ConfigException(CHAT_PRIORITY, "must be one of " + CHAT_PRIORITIES + ", got '"
                    + values.get(CHAT_PRIORITY) + "'");
        }
        String serverId = string(values, SERVER_ID, "").strip();
        if (!serverId.isEmpty() && !SERVER_ID_PATTERN.matcher(serverId).matches()) {
            throw new ConfigException(SERVER_ID, "must be 1-32 of a-z, 0-9, _ and -, starting with a letter or digit"
                    + " (as in the bridge's servers.yml), got '" + serverId + "'");
        }
        if (serverId.equals("default")) {
            throw new ConfigException(SERVER_ID, "'default' is the bridge's own server of link.token: leave"
                    + " server-id out for it");
        }
        String locale = string(values, LOCALE, Messages.ENGLISH).strip();
        if (!Messages.LOCALES.contains(locale)) {
            throw new ConfigException(LOCALE, "must be one of " + Messages.LOCALES + ", got '" + locale + "'");
        }
        Duration linkTimeout = Duration.ofMillis(linkTimeoutMillis(values.get(LINK_TIMEOUT_MS)));
        ManagedBridgeConfig managed = ManagedBridgeConfig.fromSection(values.get(BRIDGE), dataFolder);
        if (managed.enabled() && !"ws".equals(urls.get(0).getScheme())) {
            throw new ConfigException(BRIDGE + ".managed", "the managed bridge listens on plain ws:// (loopback);"
                    + " the first bridge-url must be ws://, got " + urls.get(0));
        }
        return new PluginConfig(urls, token, tokenFile, verdict, priority, serverId, locale, messages(values),
                linkTimeout, managed);
    }

    /**
     * The {@code messages} map: each key one of the plugin's lines, each value a template the
     * template rules accept. The adapter hands nested YAML over as a map of dotted keys
     * ({@code chat.ai-prefix}), as the keys are written.
     */
    private static Map<String, String> messages(Map<String, ?> values) {
        Object raw = values.get(MESSAGES);
        if (raw == null) {
            return Map.of();
        }
        if (!(raw instanceof Map<?, ?> map)) {
            throw new ConfigException(MESSAGES, "expected a map of message keys to lines, got " + describe(raw));
        }
        Map<String, String> lines = new TreeMap<>();
        Set<String> known = Messages.set(Messages.ENGLISH).keySet();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            String key = MESSAGES + "." + entry.getKey();
            if (!(entry.getKey() instanceof String name) || !known.contains(name)) {
                throw new ConfigException(key, "unknown message; known: " + new TreeSet<>(known));
            }
            if (!(entry.getValue() instanceof String template)) {
                throw new ConfigException(key, "expected text, got " + describe(entry.getValue()));
            }
            String problem = Messages.problem(name, template);
            if (problem != null) {
                throw new ConfigException(key, problem);
            }
            lines.put(name, template);
        }
        return lines;
    }

    /** The core's settings for one server start. */
    public CoreSettings coreSettings(UUID instanceId) {
        LinkSettings link = LinkSettings.defaults(this.bridgeUrls).withSilenceTimeout(this.linkTimeout)
                .withHandshakeTimeout(this.linkTimeout);
        return CoreSettings.defaults(link,
                TokenSource.configuredOrFile(this.token, this.tokenFile), instanceId)
                .withVerdictTimeout(this.verdictTimeout).withServerId(this.serverId)
                .withMessages(this.locale, this.messages);
    }

    /**
     * The managed bridge's settings (its host and port those of the first {@code bridge-url}), or
     * empty when {@code bridge.managed} is off.
     */
    public java.util.Optional<dev.mineclaw.core.managed.ManagedSettings> managedSettings(Path dataFolder) {
        if (!this.managed.enabled()) {
            return java.util.Optional.empty();
        }
        URI first = bridgeUrl();
        int port = first.getPort() < 0 ? 80 : first.getPort();
        return java.util.Optional.of(dev.mineclaw.core.managed.ManagedSettings.of(this.managed.python(),
                dev.mineclaw.core.managed.ManagedSettings.systemPath(), dataFolder, this.managed.wheelhouse(),
                first.getHost(), port));
    }

    /** The first bridge. */
    public URI bridgeUrl() {
        return this.bridgeUrls.get(0);
    }

    /** One URL as text, or a YAML list of them (1 to {@link LinkSettings#MAX_URLS}, none twice). */
    private static List<URI> urls(Object value) {
        if (value == null) {
            return List.of(url(DEFAULT_URL));
        }
        if (value instanceof String text) {
            return List.of(url(text));
        }
        if (!(value instanceof List<?> items)) {
            throw new ConfigException(BRIDGE_URL, "expected a URL or a list of URLs, got " + describe(value));
        }
        if (items.isEmpty() || items.size() > LinkSettings.MAX_URLS) {
            throw new ConfigException(BRIDGE_URL, "list 1-" + LinkSettings.MAX_URLS + " bridges, got " + items.size());
        }
        List<URI> urls = new java.util.ArrayList<>();
        for (Object item : items) {
            if (!(item instanceof String text)) {
                throw new ConfigException(BRIDGE_URL, "expected each entry to be a URL, got " + describe(item));
            }
            URI url = url(text);
            if (urls.contains(url)) {
                throw new ConfigException(BRIDGE_URL, "lists " + url + " twice");
            }
            urls.add(url);
        }
        return List.copyOf(urls);
    }

    private static String string(Map<String, ?> values, String key, String fallback) {
        Object value = values.get(key);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof String text)) {
            throw new ConfigException(key, "expected text, got " + describe(value));
        }
        return text;
    }

    private static URI url(String raw) {
        URI uri;
        try {
            uri = new URI(raw.strip());
        } catch (URISyntaxException exc) {
            throw new ConfigException(BRIDGE_URL, "not a URL: " + exc.getMessage());
        }
        if (!"ws".equals(uri.getScheme()) && !"wss".equals(uri.getScheme())) {
            throw new ConfigException(BRIDGE_URL, "must start with ws:// or wss://, got '" + raw + "'");
        }
        if (uri.getHost() == null) {
            throw new ConfigException(BRIDGE_URL, "names no host: '" + raw + "'");
        }
        return uri;
    }

    private static Path path(String raw, Path dataFolder) {
        if (raw.isBlank()) {
            throw new ConfigException(TOKEN_FILE, "must name a file (the bridge writes link.token)");
        }
        try {
            return dataFolder.resolve(raw.strip()).normalize();
        } catch (InvalidPathException exc) {
            throw new ConfigException(TOKEN_FILE, "not a path: " + exc.getMessage());
        }
    }

    private static long verdictMillis(Object value) {
        if (value == null) {
            return CoreSettings.DEFAULT_VERDICT_TIMEOUT.toMillis();
        }
        // YAML gives Integer or Long for whole numbers; anything else (2.5, "250") is refused.
        if (!(value instanceof Integer) && !(value instanceof Long)) {
            throw new ConfigException(VERDICT_TIMEOUT_MS, "expected whole milliseconds, got " + describe(value));
        }
        long millis = ((Number) value).longValue();
        if (millis < 1 || millis > MAX_VERDICT_TIMEOUT_MS) {
            throw new ConfigException(VERDICT_TIMEOUT_MS,
                    "must be 1-" + MAX_VERDICT_TIMEOUT_MS + " ms, got " + millis);
        }
        return millis;
    }

    private static long linkTimeoutMillis(Object value) {
        if (value == null) {
            return DEFAULT_LINK_TIMEOUT_MS;
        }
        if (!(value instanceof Integer) && !(value instanceof Long)) {
            throw new ConfigException(LINK_TIMEOUT_MS, "expected whole milliseconds, got " + describe(value));
        }
        long millis = ((Number) value).longValue();
        if (millis < MIN_LINK_TIMEOUT_MS || millis > MAX_LINK_TIMEOUT_MS) {
            throw new ConfigException(LINK_TIMEOUT_MS,
                    "must be " + MIN_LINK_TIMEOUT_MS + "-" + MAX_LINK_TIMEOUT_MS + " ms, got " + millis);
        }
        return millis;
    }

    static String describe(Object value) {
        return value.getClass().getSimpleName() + " '" + value + "'";
    }
}
