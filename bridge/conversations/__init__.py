"""Several private conversations per player (``/ai new|list|switch|rename|delete``)."""
