"""An MCP server that never answers the handshake: it reads its input and says nothing."""

import sys

for _line in sys.stdin:
    pass
