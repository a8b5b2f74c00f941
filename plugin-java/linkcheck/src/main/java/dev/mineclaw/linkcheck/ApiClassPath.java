package dev.mineclaw.linkcheck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The classes of one server line's API (paper-api and the libraries it exposes), read from their
 * jars on demand: the first jar holding a class wins, as on a flat class path.
 */
final class ApiClassPath implements AutoCloseable {
    private final List<ZipFile> jars = new ArrayList<>();
    private final Map<String, Optional<ClassModel>> parsed = new HashMap<>();

    ApiClassPath(List<Path> jars) {
        try {
            for (Path jar : jars) {
                this.jars.add(new ZipFile(jar.toFile()));
            }
        } catch (IOException exc) {
            close();
            throw new UncheckedIOException(exc);
        }
    }

    /** The class with this internal name ({@code org/bukkit/Server}), if some jar holds it. */
    Optional<ClassModel> find(String internalName) {
        return this.parsed.computeIfAbsent(internalName, this::read);
    }

    private Optional<ClassModel> read(String internalName) {
        for (ZipFile jar : this.jars) {
            ZipEntry entry = jar.getEntry(internalName + ".class");
            if (entry != null) {
                try (var in = jar.getInputStream(entry)) {
                    return Optional.of(ClassFile.of().parse(in.readAllBytes()));
                } catch (IOException exc) {
                    throw new UncheckedIOException(exc);
                }
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        for (ZipFile jar : this.jars) {
            try {
                jar.close();
            } catch (IOException exc) {
                // Read-only jars: nothing is lost by failing to close one.
            }
        }
    }
}
