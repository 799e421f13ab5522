"""Optional integrations; each imports its vendor package only when used."""
