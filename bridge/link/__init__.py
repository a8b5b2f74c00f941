"""The plugin link: protocol v1 (``docs/protocol.md``) as a sans-I/O core and a thin server.

Modules, from the wire up::

    codes      ErrorCode, CloseCode: the stable names shared with the Java side
    messages   pydantic models of every type's data, and the type registry
    codec      decode_frame(raw, sender) -> Frame | DecodeFault; encode_frame(...)
    auth       nonces, the handshake MAC, the link.token file
    protocol   LinkProtocol: the state machine (feed frames, get events and frames to send)
    handler    Link and LinkHandler (how the application plugs in)
    errors     LinkRequestError: a request the plugin did not answer
    server     LinkServer, LinkSettings: the asyncio websockets server

The rest of the bridge starts a ``LinkServer(token=..., handler=...)`` and talks to the plugin
through it (``await server.request("players.list", PlayersList())``); it is called back through
its ``LinkHandler``.
"""
