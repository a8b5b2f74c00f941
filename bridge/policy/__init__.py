"""Policy decisions enforced in code: the command whitelist (and, later, approvals)."""
