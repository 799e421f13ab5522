"""Background Responses, the Responses surface's own mode: ``submit``
(reserve ids, store queued, queue the job), ``task`` (the job on the queue,
its cancel watch), ``execute`` (one run, recorded), ``recording`` (the
encoder's sink that keeps events instead of sending bytes) and ``control``
(follow and cancel). The queue itself is the job runtime's (``jobs/``).
"""
