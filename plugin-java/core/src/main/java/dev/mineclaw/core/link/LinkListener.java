package dev.mineclaw.core.link;

/** Told about the link's life. Called on the link's own threads: implementations must not block. */
public interface LinkListener {
    /** The handshake completed; requests can be made from now on. */
    void linkUp(String sessionId);

    /**
     * A connection that was up, or whose handshake was under way, ended. Requests fail at once
     * until the next {@link #linkUp}.
     */
    void linkDown(String reason);

    /** The bridge said which chat to forward. */
    void linkState(LinkState state);
}
