"""Provider client tests: readers, builders, identity and the wire, against the recordings."""
