"""The OpenAI Responses wire protocol: ``POST {base_url}/responses``, stateless."""
