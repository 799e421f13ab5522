"""A Chainlit chat UI for LGOS graphs, speaking only OpenAI protocols."""
