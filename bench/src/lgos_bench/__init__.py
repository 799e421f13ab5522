"""lgos-bench."""
