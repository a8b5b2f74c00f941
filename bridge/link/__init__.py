"""The plugin link: protocol v1 as a sans-I/O core (``protocol``) and a thin asyncio server.

See ``docs/protocol.md`` for the wire format; ``bridge.link.server.LinkServer`` is what the rest
of the bridge starts, and ``bridge.link.handler.LinkHandler`` is how it plugs in.
"""
