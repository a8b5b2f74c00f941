"""Whether a listen-mode line should start a turn: the decision contract, its model answer,
the embedded classifier, and the record owners read with ``/mineclaw listen why``.

A decision is evidence for the chat path, never permission: the line has passed every gate
before anyone is asked, and the chat path checks them again before a decided line starts a
turn. The package knows no provider and no configuration file; `bridge.app` hands it a way to
ask the model (a port) and the settings of the plane in force.
"""
