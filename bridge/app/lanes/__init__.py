"""The lanes a bridge runs turns in, and a turn's output over the link.

Modules::

    turn_lanes      TurnLanes: the public lane, a private lane per player, the cap, the queue
    output          LinkTurnOutput: the engine's TurnOutput over the link
    private_output  PrivateLinkOutput: the same, the answer to the asker alone
"""
