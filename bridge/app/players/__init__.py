"""What the bridge remembers per player, in the store (`bridge.store.player_state`).

Modules::

    state_files         the JSON files of the bridges before the store (read bounded)
    state_import        those files imported at first start, then set aside (``.imported``)
    conversation_state  every player's private conversations
    listen_optouts      who opted out of listen mode
    persona_choices     each player's persona for ``/ai``
"""
