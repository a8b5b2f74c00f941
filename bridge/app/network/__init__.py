"""Several servers on one bridge, and several bridges on one database.

Modules::

    network        Network: a runtime and a handler per server id, one store for all
    server_leases  ServerLeases: which servers this bridge serves (PostgreSQL leases)
    cut_turns      CutTurns: turns cut when a server was lost, and the line each asker is owed
    kept_usage     usage the ledger refused, written when a server links and before shutdown
"""
