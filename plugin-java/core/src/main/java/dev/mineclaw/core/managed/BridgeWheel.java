package dev.mineclaw.core.managed;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bridge's wheel as the jar carries it: {@value #INDEX} names the file, which sits beside it
 * under {@value #FOLDER} (the release build and {@code make plugin} add both).
 *
 * @param fileName the wheel's own name, which pip reads the version and tags from
 * @param bytes its content
 */
public record BridgeWheel(String fileName, byte[] bytes) {
    public static final String FOLDER = "mineclaw-bridge/";
    public static final String INDEX = FOLDER + "wheel.txt";
    /** Bounds what a jar's resource may make the plugin hold in memory. */
    static final int MAX_BYTES = 64 * 1024 * 1024;
    private static final Pattern NAME = Pattern.compile("mineclaw_bridge-([0-9][0-9A-Za-z.+!-]*?)-py3-none-any\\.whl");

    public BridgeWheel {
        if (!NAME.matcher(fileName).matches()) {
            throw new ManagedBridgeException("the jar's bridge wheel has an unexpected name: " + fileName);
        }
    }

    /** The bridge's version, from the wheel's name. */
    public String version() {
        Matcher matcher = NAME.matcher(this.fileName);
        return matcher.matches() ? matcher.group(1) : "?";
    }

    /** The wheel in {@code loader}'s resources, or empty when the jar carries none (a development build). */
    public static Optional<BridgeWheel> fromResources(ClassLoader loader) throws IOException {
        String name;
        try (InputStream index = loader.getResourceAsStream(INDEX)) {
            if (index == null) {
                return Optional.empty();
            }
            name = new String(index.readNBytes(256), StandardCharsets.UTF_8).strip();
        }
        try (InputStream wheel = loader.getResourceAsStream(FOLDER + name)) {
            if (wheel == null) {
                throw new ManagedBridgeException("the jar names the bridge wheel " + name + " but does not carry it");
            }
            byte[] bytes = wheel.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                throw new ManagedBridgeException("the jar's bridge wheel is larger than " + MAX_BYTES + " bytes");
            }
            return Optional.of(new BridgeWheel(name, bytes));
        }
    }
}
