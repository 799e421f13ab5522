"""Background Responses: the store of their state and the backends that run them.

``background/`` never imports ``openai/``: a backend runs opaque jobs with an
executor the OpenAI layer supplies when the server starts.
"""
