"""The process: everything one ``serve`` owns and the pair (plane, served configuration) in force.

Modules::

    runtime  Runtime: the stores, provider clients, tools, lanes, engine, listen decisions,
             titles and memory of one server; reloads; turn snapshots
    heap     the start-up heap frozen once ``serve`` listens
"""
