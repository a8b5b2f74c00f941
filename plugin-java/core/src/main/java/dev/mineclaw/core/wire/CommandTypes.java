package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code command.resolve} (feature {@code command.resolve}): the bridge asks what the server's
 * command map says about labels before it judges a command against its never list
 * (docs/protocol.md, "Command resolution").
 */
final class CommandTypes {
    static final Pattern LABEL = Pattern.compile("(?U)[^\\s/][^\\s]{0,79}");
    static final Pattern NAME = Pattern.compile("(?U)[^\\s]{1,80}");
    static final int LABELS_MAX = 64;
    static final int ALIASES_MAX = 64;
    private static final Set<String> RESOLVED =
            Set.of("label", "known", "name", "plugin", "aliases", "permission", "script");

    private CommandTypes() {}

    static void register() {
        MessageTypes.request(Direction.BRIDGE_TO_PLUGIN, "command.resolve", data -> {
            data.only(Set.of("labels"), Set.of("labels"));
            JsonArray labels = data.array("labels", LABELS_MAX);
            if (labels.isEmpty()) {
                throw data.fail("labels", "must hold at least one label");
            }
            for (int i = 0; i < labels.size(); i++) {
                listed(data, "labels[" + i + "]", labels.get(i), LABEL);
            }
        }, data -> {
            data.only(Set.of("commands"), Set.of("commands"));
            JsonArray commands = data.array("commands", LABELS_MAX);
            for (int i = 0; i < commands.size(); i++) {
                resolved(Fields.of(commands.get(i), data.name("commands[" + i + "]"), ErrorCode.INVALID_DATA));
            }
        });
    }

    private static void listed(Fields owner, String where, JsonElement item, Pattern pattern) {
        if (!item.isJsonPrimitive() || !item.getAsJsonPrimitive().isString()) {
            throw owner.fail(where, "must be a string");
        }
        owner.checkString(where, item.getAsString(), 1, 80, pattern);
    }

    private static void resolved(Fields command) {
        command.only(RESOLVED, RESOLVED);
        command.string("label", 1, 80, LABEL);
        boolean known = command.bool("known");
        boolean script = command.bool("script");
        JsonArray aliases = command.array("aliases", ALIASES_MAX);
        for (int i = 0; i < aliases.size(); i++) {
            listed(command, "aliases[" + i + "]", aliases.get(i), NAME);
        }
        if (!known) {
            for (String field : new String[] {"name", "plugin", "permission"}) {
                if (!command.isNull(field)) {
                    throw command.fail(field, "must be null for an unknown label");
                }
            }
            if (!aliases.isEmpty() || script) {
                throw command.fail("known", "an unknown label has no aliases and is no script");
            }
            return;
        }
        command.string("name", 1, 80, NAME);
        if (!command.isNull("plugin")) {
            command.string("plugin", 1, 64, null);
        }
        if (!command.isNull("permission")) {
            command.string("permission", 1, 256, null);
        }
    }
}
