"""The history book: a conversation as written-book pages, or as plain lines for the console.

`bridge.history.book` reads a lane's archived turns (the players' lines and the assistant's
answers, already redacted when they were archived), keeps the newest `MAX_ENTRIES`, and lays them
out as pages a written book can hold; the app opens them with ``output.book``.
"""
