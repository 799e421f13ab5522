"""Open WebUI integration of LGOS: the pipe Function and its sync command."""
