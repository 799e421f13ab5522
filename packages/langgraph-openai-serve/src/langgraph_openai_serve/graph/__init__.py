"""The protocol-neutral graph layer; it never imports ``openai/``."""
