package dev.mineclaw.core.managed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A shell script standing in for Python, answering exactly the calls the manager makes (the
 * version probe, {@code -m venv}, {@code -m pip install}, {@code -m bridge init|serve}); each
 * test says how it behaves. {@code -m venv} copies the script into the venv, so the venv's
 * Python behaves the same way. The calls it got are appended to {@code calls.log} beside it.
 */
final class FakePython {
    String version = "3.11.7";
    String venv = "mkdir -p \"$3/bin\" && cp \"$0\" \"$3/bin/python\" && exit 0";
    String pip = "exit 0";
    String init = "touch \"$5/config.yml\"; exit 0";
    String serve = "echo \"listening on ws://$7:$9/link\"; exec sleep 1000";

    Path write(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        Path log = dir.resolve("calls.log");
        String script = """
                #!/bin/sh
                echo "$@" >> '%s'
                case "$1 $2" in
                  "-c "*) echo '%s'; exit 0 ;;
                  "-m venv") %s ;;
                  "-m pip") %s ;;
                  "-m bridge") case "$3" in
                      init) %s ;;
                      serve) %s ;;
                    esac ;;
                esac
                echo "fake python: unexpected call: $@" >&2
                exit 9
                """.formatted(log, this.version, this.venv, this.pip, this.init, this.serve);
        Path file = dir.resolve(name);
        Files.writeString(file, script, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }
}
