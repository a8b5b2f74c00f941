"""What the bridge remembers per player in small files of its data folder.

Modules::

    state_files         small JSON files replaced whole (read bounded, written atomically)
    conversation_state  every player's private conversations (``data/conversations.json``)
    listen_optouts      who opted out of listen mode (``data/listen-optouts.json``)
    persona_choices     each player's persona for ``/ai`` (``data/persona-choices.json``)
"""
