package dev.mineclaw.core.command;

import dev.mineclaw.core.platform.PlayerRef;

/** Who ran {@code /mineclaw}: the console, or a player. Immutable. */
public record CommandSender(PlayerRef player) {
    /** The console. */
    public static final CommandSender CONSOLE = new CommandSender(null);

    public static CommandSender player(PlayerRef player) {
        return new CommandSender(java.util.Objects.requireNonNull(player, "player"));
    }

    public boolean isConsole() {
        return this.player == null;
    }
}
