"""``lgos-demo-stack``: every process the demos need, started and stopped together."""
