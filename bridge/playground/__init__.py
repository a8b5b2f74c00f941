"""``mineclaw-bridge try``: a terminal playground in which you are a player on a simulated
server linked to a real bridge (``session``), with a scripted offline model for trying tools,
confirmations and gates without a key or a network (``scripted_model``)."""
