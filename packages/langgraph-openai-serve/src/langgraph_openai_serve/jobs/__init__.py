"""The job runtime: what any queued job needs, and nothing about Responses.

``protocol`` (``Job``, ``Task``, ``JobQueue``, ``JobWorker``: the contract
both backends keep) and ``retry`` (the policies tasks choose from). The
queues themselves are the backends' (``backends/memory/jobs.py``,
``backends/postgres/queue.py``); the tasks are their features'
(``openai/responses/background/``, ``batches/jobs.py``, ``webhooks/sender.py``).
"""
