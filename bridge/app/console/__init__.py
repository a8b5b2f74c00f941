"""The owner's console as a process of its own, and what it asks of the running bridge.

Modules::

    console_process  ConsoleProcess: the child started by ``serve``, restarted with backoff,
                     stopped with the bridge
    console_child    the child's entry (``python -m bridge.app.console.console_child``): the
                     folder, read-only readers of the store, the pages served
    console_actions  ConsoleActions: the bridge's end of the channel (loopback, a token)
    console_binding  NetworkConsole: the channel's actions done with the network's runtimes
"""
