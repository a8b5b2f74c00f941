"""The shipped ``message.yml`` sets other than English (``config.yml`` ``locale``)."""
