"""Background Responses: everything about them, in one package.

``protocol`` (the store and backend contracts), ``memory`` (the in-process
store and backend), ``executor`` (submit, run a job, cancel, replay),
``postgres`` (the PostgreSQL store and procrastinate's queue) and ``worker``
(``lgos worker``).
"""
