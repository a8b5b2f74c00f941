package dev.mineclaw.core;

/**
 * The root of every exception the plugin raises on purpose.
 *
 * <pre>
 * MineclawException
 * ├── wire.WireException          a frame broke the protocol; carries the stable error code
 * ├── link.LinkException          a request failed: DISCONNECTED, TIMEOUT, or the peer's error frame
 * ├── platform.PlayerGoneException the player left before work scheduled for them could run
 * ├── platform.ThreadRuleException work touched the world or a player from the wrong thread
 * └── managed.ManagedBridgeException a step of starting the managed bridge failed (its console line)
 * </pre>
 *
 * <p>Lower-library exceptions (Gson, the JDK's WebSocket, I/O) are caught where they happen and
 * rethrown as one of these with the original as the cause.
 */
public class MineclawException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MineclawException(String message) {
        super(message);
    }

    public MineclawException(String message, Throwable cause) {
        super(message, cause);
    }
}
