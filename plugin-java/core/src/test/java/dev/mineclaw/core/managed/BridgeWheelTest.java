package dev.mineclaw.core.managed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How the plugin finds the wheel its jar carries ({@code mineclaw-bridge/wheel.txt} naming the
 * wheel beside it): read from a real jar through a class loader that sees that jar alone, as the
 * plugin's class loader sees its own.
 */
class BridgeWheelTest {
    private static final String NAME = "mineclaw_bridge-0.3.0-py3-none-any.whl";

    @TempDir
    Path tmp;

    @Test
    void theWheelTheJarNamesIsReadWithItsVersion() throws Exception {
        byte[] wheel = "the wheel's bytes".getBytes(StandardCharsets.UTF_8);
        Optional<BridgeWheel> found = read(Map.of(BridgeWheel.INDEX, NAME + "\n", BridgeWheel.FOLDER + NAME, wheel));
        assertTrue(found.isPresent());
        assertEquals(NAME, found.get().fileName());
        assertEquals("0.3.0", found.get().version());
        assertArrayEquals(wheel, found.get().bytes());
    }

    @Test
    void aJarWithoutTheIndexCarriesNone() throws Exception {
        assertEquals(Optional.empty(), read(Map.of("plugin.yml", "name: Mineclaw\n")));
    }

    @Test
    void anIndexNamingAMissingWheelIsSaid() {
        ManagedBridgeException thrown = assertThrows(ManagedBridgeException.class,
                () -> read(Map.of(BridgeWheel.INDEX, NAME + "\n")));
        assertEquals("the jar names the bridge wheel " + NAME + " but does not carry it", thrown.getMessage());
    }

    @Test
    void aWheelOfAnotherNameIsRefused() {
        String other = "something_else-1.0-py3-none-any.whl";
        ManagedBridgeException thrown = assertThrows(ManagedBridgeException.class,
                () -> read(Map.of(BridgeWheel.INDEX, other, BridgeWheel.FOLDER + other, "x")));
        assertEquals("the jar's bridge wheel has an unexpected name: " + other, thrown.getMessage());
    }

    /** A jar holding {@code entries} (text or bytes), read through a loader that sees it alone. */
    private Optional<BridgeWheel> read(Map<String, Object> entries) throws IOException {
        Path jar = this.tmp.resolve("plugin.jar");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            for (Map.Entry<String, Object> entry : new LinkedHashMap<>(entries).entrySet()) {
                out.putNextEntry(new JarEntry(entry.getKey()));
                out.write(entry.getValue() instanceof byte[] bytes ? bytes
                        : entry.getValue().toString().getBytes(StandardCharsets.UTF_8));
                out.closeEntry();
            }
        }
        try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
            return BridgeWheel.fromResources(loader);
        }
    }
}
