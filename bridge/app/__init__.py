"""The running application: the link handler that turns public chat into turns.

Modules::

    runtime    Runtime: owns the control store, provider clients, tools, archive, audit,
               session, engine and compactor for one ``serve`` process; builds turn snapshots
    output     LinkTurnOutput: the engine's TurnOutput over the link (action bar, reply, notices)
    texts      Text frames from ``message.yml`` templates
    chat       ChatPath: wake classification, the gates in order, the verdict, the turn start
    commands   CommandRouter: the ``/mineclaw`` subcommands, each behind its permission node
    handler    AppHandler: the LinkHandler tying these together (listen mode per instance id)

``serve`` builds ``Runtime.open(config_dir)`` and hands ``AppHandler(runtime)`` to the link
server.
"""
