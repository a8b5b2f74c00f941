package dev.mineclaw.testkit;

import dev.mineclaw.core.text.Messages;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The command line of the testkit jar (see CONTROL.md). Immutable. */
record TestkitOptions(List<URI> urls, Path tokenFile, String token, UUID instanceId, String platform,
        Duration verdictTimeout, String serverId, String locale, Duration linkTimeout, Path managedData,
        String managedPython, Path managedWheel, boolean askTrail) {
    static final String USAGE = "usage: java -jar mineclaw-testkit.jar --url ws://127.0.0.1:PORT/link"
            + " --token-file PATH [--token T] [--instance-id UUID] [--platform testkit|folia]"
            + " [--verdict-timeout-ms 250] [--server-id ID] [--locale en|zh_CN] [--link-timeout-ms MS]"
            + " [--managed-data DIR --managed-wheel WHEEL|" + TestkitOptions.WHEEL_FROM_CLASS_PATH
            + " [--managed-python PATH]] [--ask-trail on|off]";
    /** {@code --managed-wheel classpath}: the wheel a plugin jar on the class path carries, read as the plugin does. */
    static final String WHEEL_FROM_CLASS_PATH = "classpath";

    /** Parses {@code args}; throws IllegalArgumentException with a message naming the bad option. */
    static TestkitOptions parse(String[] args) {
        List<URI> urls = new ArrayList<>();
        Path tokenFile = null;
        String token = null;
        UUID instanceId = UUID.randomUUID();
        String platform = "testkit";
        Duration verdictTimeout = Duration.ofMillis(250);
        String serverId = "";
        String locale = Messages.ENGLISH;
        Duration linkTimeout = null;  // the link's own defaults unless given
        Path managedData = null;
        String managedPython = "";
        Path managedWheel = null;
        boolean askTrail = false;
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + option + " needs a value");
            }
            String value = args[++i];
            switch (option) {
                case "--url" -> urls.add(parseUrl(value));  // repeated: bridges tried in order
                case "--token-file" -> tokenFile = Path.of(value);
                case "--token" -> token = value;
                case "--instance-id" -> instanceId = parseUuid(value);
                case "--platform" -> {
                    if (!value.equals("testkit") && !value.equals("folia")) {
                        throw new IllegalArgumentException("--platform must be testkit or folia, got '" + value + "'");
                    }
                    platform = value;
                }
                case "--verdict-timeout-ms" -> verdictTimeout = Duration.ofMillis(parsePositive(option, value));
                case "--server-id" -> serverId = value;
                case "--link-timeout-ms" -> linkTimeout = Duration.ofMillis(parsePositive(option, value));
                case "--managed-data" -> managedData = Path.of(value);
                case "--managed-python" -> managedPython = value;
                case "--managed-wheel" -> managedWheel = Path.of(value);
                case "--ask-trail" -> {
                    if (!value.equals("on") && !value.equals("off")) {
                        throw new IllegalArgumentException("--ask-trail must be on or off, got '" + value + "'");
                    }
                    askTrail = value.equals("on");
                }
                case "--locale" -> {
                    if (!Messages.LOCALES.contains(value)) {
                        throw new IllegalArgumentException("--locale must be one of " + Messages.LOCALES + ", got '"
                                + value + "'");
                    }
                    locale = value;
                }
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("--url is required");
        }
        if (tokenFile == null && token == null) {
            throw new IllegalArgumentException("--token-file (or --token) is required");
        }
        if ((managedData == null) != (managedWheel == null)) {
            throw new IllegalArgumentException("--managed-data and --managed-wheel go together");
        }
        return new TestkitOptions(List.copyOf(urls), tokenFile, token, instanceId, platform, verdictTimeout, serverId,
                locale, linkTimeout, managedData, managedPython, managedWheel, askTrail);
    }

    private static URI parseUrl(String value) {
        try {
            URI url = new URI(value);
            if (!"ws".equals(url.getScheme()) && !"wss".equals(url.getScheme())) {
                throw new IllegalArgumentException("--url must be a ws:// or wss:// URL, got '" + value + "'");
            }
            return url;
        } catch (java.net.URISyntaxException exc) {
            throw new IllegalArgumentException("--url is not a URL: " + exc.getMessage(), exc);
        }
    }

    private static UUID parseUuid(String value) {
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException exc) {
            throw new IllegalArgumentException("--instance-id is not a UUID: '" + value + "'", exc);
        }
    }

    private static long parsePositive(String option, String value) {
        try {
            long parsed = Long.parseLong(value);
            if (parsed <= 0) {
                throw new IllegalArgumentException(option + " must be positive, got " + parsed);
            }
            return parsed;
        } catch (NumberFormatException exc) {
            throw new IllegalArgumentException(option + " must be a number, got '" + value + "'", exc);
        }
    }
}
