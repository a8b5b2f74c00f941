"""Mineclaw bridge: the Python half of an AI agent for Minecraft servers."""

__version__ = "0.1.0"
