"""The public session and its turns: wake detection, gates, listen mode, the turn loop,
compaction. The link glue and the `/mineclaw` commands drive these; none of them touches a
socket, so every rule here is tested without one.
"""
