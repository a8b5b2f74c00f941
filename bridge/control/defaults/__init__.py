"""The default control-plane files, copied by ``mineclaw-bridge init``."""
