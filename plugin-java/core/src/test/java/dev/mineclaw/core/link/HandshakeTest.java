package dev.mineclaw.core.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.mineclaw.core.MineclawException;
import dev.mineclaw.core.Vectors;
import dev.mineclaw.core.wire.Direction;
import dev.mineclaw.core.wire.Frame;
import dev.mineclaw.core.wire.FrameCodec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HandshakeTest {
    @Test
    void macMatchesEverySharedCase() {
        JsonObject file = Vectors.read(Vectors.folder().resolve("hmac.json"));
        int checked = 0;
        for (JsonElement element : file.getAsJsonArray("cases")) {
            JsonObject vector = element.getAsJsonObject();
            String serverId = vector.has("server_id") ? vector.get("server_id").getAsString() : "";
            String mac = Handshake.mac(vector.get("token").getAsString(), vector.get("nonce").getAsString(),
                    vector.get("instance_id").getAsString(), serverId);
            assertEquals(vector.get("mac").getAsString(), mac, "case " + vector);
            checked++;
        }
        assertTrue(checked >= 1, "hmac.json has no cases");
    }

    @Test
    void macDependsOnEveryInput() {
        String base = Handshake.mac("token", "n".repeat(43), "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b");
        assertNotEquals(base, Handshake.mac("tokeN", "n".repeat(43), "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b"));
        assertNotEquals(base, Handshake.mac("token", "m".repeat(43), "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b"));
        assertNotEquals(base, Handshake.mac("token", "n".repeat(43), "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1c"));
    }

    @Test
    void helloNamesItsServerIdAndSignsIt() {
        UUID instance = UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");
        Handshake.Identity identity = new Handshake.Identity(instance, "0.1.0", "1.21.8", "testkit",
                List.of("chat"), "lobby");
        JsonObject data = Handshake.helloData(identity, "test-token", "A".repeat(43));
        assertEquals("lobby", data.get("server_id").getAsString());
        assertEquals(Handshake.mac("test-token", "A".repeat(43), instance.toString(), "lobby"),
                data.get("mac").getAsString());
        assertNotEquals(Handshake.mac("test-token", "A".repeat(43), instance.toString()),
                data.get("mac").getAsString());
        FrameCodec codec = new FrameCodec();
        codec.decode(codec.encode(new Frame("p-1", "hello", null, data)), Direction.PLUGIN_TO_BRIDGE);
    }

    @Test
    void emptyTokenIsRefused() {
        assertThrows(MineclawException.class, () -> Handshake.mac("", "n".repeat(43), "x"));
    }

    @Test
    void helloDataIsAValidHelloRequest() {
        UUID instance = UUID.fromString("3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f");
        Handshake.Identity identity = new Handshake.Identity(instance, "0.1.0", "1.21.8", "testkit",
                List.of("chat", "players.list"));
        JsonObject data = Handshake.helloData(identity, "test-token", "A".repeat(43));
        FrameCodec codec = new FrameCodec();
        Frame decoded = codec.decode(codec.encode(new Frame("p-1", "hello", null, data)), Direction.PLUGIN_TO_BRIDGE);
        assertEquals(Handshake.mac("test-token", "A".repeat(43), instance.toString()),
                decoded.data().get("mac").getAsString());
        assertEquals(instance.toString(), decoded.data().get("instance_id").getAsString());
    }

    @Test
    void tokenComesFromConfigFirstThenFileWithoutSurroundingWhitespace(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("link.token");
        Files.writeString(file, "  from-file\n");
        assertEquals("from-config", TokenSource.configuredOrFile("from-config", file).token());
        assertEquals("from-file", TokenSource.configuredOrFile("  ", file).token());
        assertEquals("from-file", TokenSource.configuredOrFile(null, file).token());
    }

    @Test
    void missingOrEmptyTokenFileIsAClearError(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("absent.token");
        MineclawException absent = assertThrows(MineclawException.class,
                () -> TokenSource.configuredOrFile(null, missing).token());
        assertTrue(absent.getMessage().contains(missing.toString()), absent.getMessage());
        Path empty = dir.resolve("empty.token");
        Files.writeString(empty, "\n");
        MineclawException blank = assertThrows(MineclawException.class,
                () -> TokenSource.configuredOrFile(null, empty).token());
        assertTrue(blank.getMessage().contains("empty"), blank.getMessage());
        assertThrows(MineclawException.class, () -> TokenSource.configuredOrFile(null, null).token());
    }
}
