"""Players' and operators' commands: ``/mineclaw <group>`` and ``/ai``, one module per group.

Modules::

    router         CommandRouter: the ``/mineclaw`` table (usage, permission node, help line)
                   and the dispatch; the small operator commands
    private        ``/ai <question>|clear|stop|history|persona``: a player's private turn
    conversations  ``/ai new|list|switch|rename|delete``: a player's several conversations
    history        ``/ai history`` and ``/mineclaw history``: a conversation as a book
    memory         ``/mineclaw memory``: what the assistant keeps about a player
    retry          ``/mineclaw retry``: a failed question asked again
    listen_why     ``/mineclaw listen why``: the latest listen decisions and why
    usage          ``/mineclaw usage``: token use against the limits
"""
