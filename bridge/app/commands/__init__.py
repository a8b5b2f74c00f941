"""Players' and operators' commands: ``/mineclaw <group>`` and ``/ai``, one module per group.

Modules::

    router         CommandRouter: the ``/mineclaw`` table (usage, permission node, help line),
                   the dispatch, ``help`` and ``approve|deny``
    replies        a report line, a group's usage, a node's refusal
    listen         ``listen on|off|status|why|ignore-me|include-me``
    listen_why     the report ``listen why`` shows
    lanes          ``stop [private]``, ``clear [private]``, ``compact``
    model          ``model [list|default|provider/model]``
    status         ``status``
    configuration  ``reload``, ``tools validate``, ``functions validate``
    usage          ``usage [player]``
    memory         ``memory [list|server|forget]``
    history        ``history`` and ``/ai history``: a conversation as a book
    retry          ``retry``: a failed question asked again
    private        ``/ai <question>|clear|stop|history|persona``: a player's private turn
    conversations  ``/ai new|list|switch|rename|delete``: a player's several conversations
"""
