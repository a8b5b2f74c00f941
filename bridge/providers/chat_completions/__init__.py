"""The OpenAI Chat Completions wire protocol: ``POST {base_url}/chat/completions``."""
