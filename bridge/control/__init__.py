"""The control plane: strict configuration files, validated jointly and published atomically."""
