"""The owner's console wired to the running bridge.

Modules::

    console_binding  NetworkConsole: the console's port over the network's runtimes;
                     ``start_console``
"""
