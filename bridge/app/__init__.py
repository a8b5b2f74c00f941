"""The running application, in rooms; a room imports only the rooms below it.

Rooms, from the bottom (``tests/test_layering.py`` keeps the order, ``docs/architecture.md``
draws it)::

    serving   what one control-plane version serves; configuration bound into parts
    players   per-player state files (conversations, listen opt-outs, persona choices)
    requests  one-off model requests (listen decisions, titles, vectors) behind RequestPort
    lanes     the turn lanes and a turn's output over the link
    wiring    Runtime: what one ``serve`` process owns for a server
    commands  ``/mineclaw`` and ``/ai``: one module per command group, the router
    chat      AppHandler and the public chat path
    network   several servers on one bridge; leases; cut turns
    console   the console bound to the network

``serve`` builds a ``Network`` (``network.network``), which builds a ``Runtime`` and an
``AppHandler`` per server id and hands them to the link server.
"""
