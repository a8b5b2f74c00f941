"""The process: everything one ``serve`` owns and the pair (plane, served configuration) in force.

Modules::

    runtime          Runtime: the stores, provider clients, tools, lanes, engine, listen
                     decisions, titles and memory of one server; reloads; turn snapshots
    process_stores   the stores ``storage`` names, opened together or not at all
    expired_prompts  approval prompts the last run left open, audited as expired at start
    log_level        ``logging.level`` applied to the bridge's loggers
    heap             the start-up heap frozen once ``serve`` listens
"""
