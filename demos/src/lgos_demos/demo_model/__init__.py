"""An offline, OpenAI-compatible Chat Completions server with scripted replies.

``lgos-demo-model`` serves it. The reply to each request is computed from the
conversation alone (``script.py``): tool calls chosen from the bound tools and
the user's words, answers from tool results and numbered sources with
citation markers, JSON for structured-output requests, and otherwise a reply
that shows what the model was given.
"""
