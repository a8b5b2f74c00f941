package dev.mineclaw.linkcheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The plugin jar, as packaged, links against the API of every server line it claims: the oldest
 * (1.21.4, compiled against), the newest 1.21 (1.21.11), 26.1.2 (Adventure 4.26) and 26.2
 * (Adventure 5, where a build() compiled against Adventure 5 would not link on the others).
 */
class PluginJarLinksTest {
    private static final Path JAR = Path.of(System.getProperty("mineclaw.plugin.jar"));
    private static final Path API = Path.of(System.getProperty("mineclaw.api.dir"));

    @ParameterizedTest
    @ValueSource(strings = {"1.21.4", "1.21.11", "26.1.2", "26.2"})
    void everyReferencedApiMemberExists(String line) throws IOException {
        assertTrue(Files.isRegularFile(JAR), "no plugin jar at " + JAR + ": package the paper module first");
        List<Path> jars;
        try (Stream<Path> files = Files.list(API.resolve(line))) {
            jars = files.filter(path -> path.toString().endsWith(".jar")).sorted().toList();
        }
        assertTrue(jars.stream().anyMatch(path -> path.getFileName().toString().startsWith("paper-api-")),
                "no paper-api jar for " + line + " in " + jars);
        assertEquals(List.of(), JarLinkCheck.check(JAR, jars), "the jar does not link on " + line);
    }
}
