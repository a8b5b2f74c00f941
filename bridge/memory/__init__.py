"""Memory: what the agent keeps about players and the server, recalled when it matters.

- `records`: `Memory` (one row), scopes (``personal``: one player's, ``server``: everyone's).
- `store`: `MemoryStore`, the memories table on the bridge's database (SQLite or PostgreSQL,
  through `bridge.store`), with its keyword index (SQLite FTS5 ranked by BM25; PostgreSQL's
  full-text search ranked by ``ts_rank_cd``). Every search takes the asker's UUID and keeps
  only that player's personal memories and the server's, in the SQL itself: the owner is a hard
  filter, never a ranking hint.
- `query`: turning a question into the keyword query both indexes take.
- `recall`: `MemoryRecall`, the block of memories added before a turn (at most ``top_k``, or
  ``public_top_k`` in public turns and for guests, within a token budget, redacted).

Tools (``remember``, ``recall``) are in `bridge.tools.memory_tools`; the turn engine reaches
recall through its ``MemoryRecallPort`` (`bridge.turns.ports`); `bridge.app` wires both.
"""
