package dev.mineclaw.core;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The shared test vectors in docs/protocol/vectors, located by the pom's system property. */
public final class Vectors {
    private Vectors() {}

    public static Path folder() {
        String configured = System.getProperty("mineclaw.vectors.dir");
        if (configured == null) {
            throw new IllegalStateException("the system property mineclaw.vectors.dir is not set (run through Maven)");
        }
        Path folder = Path.of(configured).normalize();
        if (!Files.isDirectory(folder)) {
            throw new IllegalStateException("the vectors folder " + folder + " does not exist");
        }
        return folder;
    }

    /** Every frame vector: all *.json files but hmac.json, sorted by name. */
    public static List<Path> frameFiles() {
        try (Stream<Path> files = Files.list(folder())) {
            return files.filter(path -> path.getFileName().toString().endsWith(".json"))
                    .filter(path -> !path.getFileName().toString().equals("hmac.json"))
                    .sorted()
                    .toList();
        } catch (IOException exc) {
            throw new UncheckedIOException(exc);
        }
    }

    public static JsonObject read(Path file) {
        try {
            return JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
        } catch (IOException exc) {
            throw new UncheckedIOException(exc);
        }
    }
}
