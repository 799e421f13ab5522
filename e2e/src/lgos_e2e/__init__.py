"""Helpers for the LGOS end-to-end browser suite."""
