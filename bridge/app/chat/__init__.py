"""The link handler and the public chat path: a chat line in, a verdict out, maybe a turn.

Modules::

    handler           AppHandler: the LinkHandler of one server (chat, commands, link state,
                      listen mode per instance id)
    chat              ChatPath: wake classification, the gates in order, the verdict, the turn
    operator_notices  one line to the operators online when turns fail at the provider
    reported_nodes    the permission nodes the plugin is asked to report
"""
