"""The Function runtime: owner-written JavaScript workflows in a capability sandbox."""
