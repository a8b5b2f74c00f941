"""One-off model requests nobody typed: listen decisions, conversation titles, memory vectors.

Modules::

    port                 RequestPort: the little of the running bridge they use (the plane in
                         force, a model's stream, the server's budget, metrics, audit)
    server_budget        a request's worst case held from the server's budget, then settled
    listen_decisions     ListenDecider: which listen-mode lines start a turn
    conversation_titles  ConversationTitler: a title after a conversation's first answer
    memory_embedding     MemoryEmbedder: memory vectors from ``memory.embeddings``
    background           BackgroundTasks: tasks started and not awaited, kept and cancelled

They reach the runtime only through ``RequestPort`` (the runtime implements it), never by
importing it.
"""
