package dev.mineclaw.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import dev.mineclaw.core.Vectors;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** The Java codec agrees with every shared vector, so it cannot drift from the Python one. */
class VectorTest {
    private final FrameCodec codec = new FrameCodec();

    @Test
    void theSharedFolderHoldsVectorsOfBothKinds() {
        List<Path> files = Vectors.frameFiles();
        long ok = files.stream().filter(file -> Vectors.read(file).getAsJsonObject("expect").has("ok")).count();
        assertTrue(ok >= 10, "expected at least 10 valid vectors, found " + ok);
        assertTrue(files.size() - ok >= 10, "expected at least 10 invalid vectors, found " + (files.size() - ok));
    }

    @TestFactory
    Stream<DynamicTest> everyVector() {
        return Vectors.frameFiles().stream().map(file -> DynamicTest.dynamicTest(file.getFileName().toString(),
                () -> check(file)));
    }

    private void check(Path file) {
        JsonObject vector = Vectors.read(file);
        Direction direction = switch (vector.get("direction").getAsString()) {
            case "plugin_to_bridge" -> Direction.PLUGIN_TO_BRIDGE;
            case "bridge_to_plugin" -> Direction.BRIDGE_TO_PLUGIN;
            default -> throw new AssertionError(file + ": unknown direction " + vector.get("direction"));
        };
        String frame = vector.get("frame").getAsString();
        JsonObject expect = vector.getAsJsonObject("expect");
        String description = file.getFileName() + " (" + vector.get("description").getAsString() + ")";
        if (expect.has("ok")) {
            Frame decoded;
            try {
                decoded = this.codec.decode(frame, direction);
            } catch (WireException exc) {
                throw new AssertionError(description + ": expected a valid frame, got " + exc.getMessage(), exc);
            }
            assertEquals(expect.get("type").getAsString(), decoded.type(), description);
            // What decodes must survive our own encoder and decode to the same data.
            Frame again = this.codec.decode(this.codec.encode(decoded), direction);
            assertEquals(decoded.data(), again.data(), description);
            assertEquals(decoded.re(), again.re(), description);
        } else {
            WireException failure = assertThrows(WireException.class, () -> this.codec.decode(frame, direction),
                    description + ": expected " + expect.get("error").getAsString());
            assertEquals(expect.get("error").getAsString(), failure.code().name(),
                    description + ": " + failure.getMessage());
        }
    }
}
