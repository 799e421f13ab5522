"""Errors raised by the protocol-neutral graph layer.

The hierarchy::

    LGOSError
    ├── GraphConfigurationError   a graph or registry is set up wrongly (startup)
    ├── GraphNotFoundError        no graph is registered under a model id
    ├── InvalidRequestError       a request is rejected before the graph runs
    ├── GraphError                a graph run broke LGOS's output contract
    │   └── StructuredOutputError  its answer does not match the requested
    │                              JSON schema (``generation.py``)
    ├── RunBusyError              another holder has the run's coordinator lease
    ├── InterruptStateConflictError  answers do not match the paused run
    ├── PausedRunNotFoundError    no paused run of this scope has that id
    └── RunTimeoutError           a run outlived the server's time limit (cancelled)

The errors of background Responses live in ``background/errors.py``.

These classes know nothing of HTTP. The OpenAI surface maps each one to its
envelope in a single table (``openai/errors.py``).
"""

from __future__ import annotations


class LGOSError(Exception):
    """Base class of every error LGOS raises on purpose."""


class GraphConfigurationError(LGOSError):
    """A graph, its configuration or the registry is invalid."""


class GraphNotFoundError(LGOSError, LookupError):
    """No graph is registered under the requested model id."""

    def __init__(self, model: str) -> None:
        super().__init__(f"The model '{model}' does not exist.")
        self.model = model


class InvalidRequestError(LGOSError):
    """A request that LGOS or a graph adapter refuses to run.

    Adapters such as ``context_factory`` may raise it; the client receives
    ``status_code`` and an ``invalid_request_error`` envelope naming ``param``.
    """

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        status_code: int = 400,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status_code = status_code


class GraphError(LGOSError):
    """A graph run produced output that breaks LGOS's contract."""


class RunBusyError(LGOSError):
    """A run coordinator lease for this checkpoint key is already held.

    Coordinators raise it at once instead of queueing: the same interrupt
    operation is being read, resumed or run by another request or worker.
    """

    def __init__(self, key: str) -> None:
        super().__init__("Another request is already running this operation.")
        self.key = key


class InterruptStateConflictError(LGOSError):
    """A resume that does not match the durable pending interrupt batch:
    missing or extra answers, a stale pause, or an already completed run."""


class PausedRunNotFoundError(LGOSError, LookupError):
    """A request names a paused run that does not exist in its scope.

    ``reference`` is the name the client gave the run (a surface decodes it
    into a run id); the surface maps the error to its own parameter.
    """

    def __init__(self, reference: str) -> None:
        super().__init__(f"No paused run '{reference}' was found.")
        self.reference = reference


class RunTimeoutError(LGOSError):
    """A run outlived the server's time limit and was cancelled."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"The run exceeded the server's time limit of {seconds:g} s.")
        self.seconds = seconds
