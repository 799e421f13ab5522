"""Operating a fleet: process lifecycle, health routes, the worker's HTTP port.

Routes outside the OpenAI prefix, without API keys, for load balancers,
orchestrators and monitoring, live in ``routes.py``: one router that both
``lgos serve``'s host app and ``lgos worker``'s health port serve.
"""
