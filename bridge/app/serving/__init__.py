"""What one control-plane version serves, and the bindings from configuration to parts.

Modules::

    served             ServedConfig: built once per published plane (whitelist, wake rules,
                       redactor, tool registry, provider clients, limits)
    folder_verdict     the one verdict on a configuration folder (validate, serve, reload)
    provider_settings  provider clients from ``providers.yml``
    storage_settings   the stores ``config.yml``'s ``storage`` names
    restart_settings   the settings only a restart applies
    budget_binding     a player's budget and tier in a turn's snapshot
    memory_binding     memory tools and recall from ``config.yml``'s ``memory``
    web_binding        the web tools' handlers from ``config.yml``'s ``web``
    texts              text frames from ``message.yml``

The lowest room of ``app``: it imports no other room.
"""
