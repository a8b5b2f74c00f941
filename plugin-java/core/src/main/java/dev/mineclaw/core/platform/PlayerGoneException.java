package dev.mineclaw.core.platform;

import dev.mineclaw.core.MineclawException;
import java.util.UUID;

/** The player left (or was never online) before work for them could run. */
public final class PlayerGoneException extends MineclawException {
    private static final long serialVersionUID = 1L;

    private final UUID player;

    public PlayerGoneException(UUID player) {
        super("player " + player + " is not online");
        this.player = player;
    }

    public UUID player() {
        return this.player;
    }
}
