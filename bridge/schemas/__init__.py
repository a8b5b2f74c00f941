"""JSON Schemas as data: every schema the bridge validates against goes through ``SafeSchema``.

Owners' schemas (``tools.yml``, ``functions.yml``) and strangers' (an MCP server's tools) get the
same rules: nothing fetched, bounded size, depth and subschemas, patterns in RE2, ``format`` an
annotation, and validation bounded in time off the event loop (``bridge.schemas.safe_schema``).
"""

from bridge.schemas.deadline import TookTooLong
from bridge.schemas.safe_schema import SafeSchema, Violation
from bridge.schemas.shape import SchemaRefused

__all__ = ["SafeSchema", "SchemaRefused", "TookTooLong", "Violation"]
