package dev.mineclaw.core.wire;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The message types of minor version 1.4, server knowledge: {@code server.plugins} and
 * {@code server.commands}, requests from the bridge (docs/protocol.md, "Server knowledge").
 */
final class KnowledgeTypes {
    static final int PLUGINS_MAX = 256;
    static final int COMMANDS_MAX = 512;
    static final int ALIASES_MAX = 16;
    static final int MAX_CHARS_MIN = 256;
    static final int MAX_CHARS_MAX = 24576;
    private static final Pattern NAME = Pattern.compile("(?U)[^\\s]{1,80}");
    private static final long INT_MAX = Integer.MAX_VALUE;

    private KnowledgeTypes() {}

    static void register() {
        Direction toPlugin = Direction.BRIDGE_TO_PLUGIN;
        MessageTypes.request(toPlugin, "server.plugins", data -> {
            data.only(Set.of("max_chars"), Set.of("max_chars"));
            data.integer("max_chars", MAX_CHARS_MIN, MAX_CHARS_MAX);
        }, data -> listing(data, "plugins", PLUGINS_MAX, KnowledgeTypes::plugin));
        MessageTypes.request(toPlugin, "server.commands", data -> {
            Set<String> fields = Set.of("player", "plugin", "max_chars");
            data.only(fields, fields);
            if (!data.isNull("player")) {
                data.string("player", 36, 36, Shapes.UUID);
            }
            if (!data.isNull("plugin")) {
                data.string("plugin", 1, 64, null);
            }
            data.integer("max_chars", MAX_CHARS_MIN, MAX_CHARS_MAX);
        }, data -> listing(data, "commands", COMMANDS_MAX, KnowledgeTypes::command));
    }

    /** {@code output.book} (feature {@code books}): a written book opened for one player. */
    static void registerBooks() {
        MessageTypes.request(Direction.BRIDGE_TO_PLUGIN, "output.book", data -> {
            Set<String> fields = Set.of("player", "title", "pages");
            data.only(fields, fields);
            data.string("player", 36, 36, Shapes.UUID);
            data.string("title", 1, 32, null);
            JsonArray pages = data.array("pages", 100);
            if (pages.isEmpty()) {
                throw data.fail("pages", "must hold at least one page");
            }
            for (int i = 0; i < pages.size(); i++) {
                Shapes.text(Fields.of(pages.get(i), data.name("pages[" + i + "]"), ErrorCode.INVALID_DATA));
            }
        }, data -> {
            data.only(Set.of("shown"), Set.of("shown"));
            data.bool("shown");
        });
    }

    /** A bounded answer: {@code field} (each entry checked by {@code entry}), total, truncated. */
    private static void listing(Fields data, String field, int max, java.util.function.Consumer<Fields> entry) {
        Set<String> fields = Set.of(field, "total", "truncated");
        data.only(fields, fields);
        JsonArray entries = data.array(field, max);
        for (int i = 0; i < entries.size(); i++) {
            entry.accept(Fields.of(entries.get(i), data.name(field + "[" + i + "]"), ErrorCode.INVALID_DATA));
        }
        data.integer("total", 0, INT_MAX);
        data.bool("truncated");
    }

    private static void plugin(Fields plugin) {
        Set<String> fields = Set.of("name", "version", "enabled", "description");
        plugin.only(fields, fields);
        plugin.string("name", 1, 64, null);
        optional(plugin, "version", 64);
        plugin.bool("enabled");
        optional(plugin, "description", 256);
    }

    private static void command(Fields command) {
        Set<String> fields = Set.of("name", "plugin", "aliases", "permission", "usage", "description");
        command.only(fields, fields);
        command.string("name", 1, 80, NAME);
        optional(command, "plugin", 64);
        JsonArray aliases = command.array("aliases", ALIASES_MAX);
        for (int i = 0; i < aliases.size(); i++) {
            JsonElement alias = aliases.get(i);
            if (!alias.isJsonPrimitive() || !alias.getAsJsonPrimitive().isString()) {
                throw command.fail("aliases[" + i + "]", "must be a string");
            }
            command.checkString("aliases[" + i + "]", alias.getAsString(), 1, 80, NAME);
        }
        optional(command, "permission", 256);
        optional(command, "usage", 256);
        optional(command, "description", 256);
    }

    private static void optional(Fields owner, String field, int max) {
        if (!owner.isNull(field)) {
            owner.string(field, 1, max, null);
        }
    }
}
