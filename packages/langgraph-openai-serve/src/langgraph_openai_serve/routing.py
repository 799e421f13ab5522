"""How LGOS's routes join an app, and how its hottest ones are served.

``add_routes``: routers go into an app route by route, not through
``include_router``. FastAPI 0.16x includes a router lazily: every request
walks each included router, checks its routes' version and rebuilds a scope
context per candidate before it reaches a plain path match. LGOS's routers
carry no prefix, dependencies or options of their own, so their routes go
into the app as they are, and a request is matched as in a hand-written app:
a non-streamed request cost about 2% less CPU (``lgos-bench inprocess``).

``RequestRoute``: an endpoint that takes the ``Request`` alone and returns a
``Response`` has nothing for FastAPI's request handler to do (no parameters
to solve, no dependencies to enter and exit, no response model), yet that
handler and its two exit stacks cost about 5% of a non-streamed Chat
request's CPU. Such a route is served the way Starlette serves a plain
route, and stays an ``APIRoute`` for everything else: matching, its
OpenAPI operation, its error responses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import get_typed_return_annotation
from fastapi.routing import APIRoute
from starlette.responses import Response
from starlette.routing import request_response


def add_routes(app: FastAPI, router: APIRouter) -> None:
    """Serve ``router``'s routes on ``app``, in order, after its own."""
    app.router.routes.extend(router.routes)


class RequestRoute(APIRoute):
    """An ``APIRoute`` served without FastAPI's request handler when its
    endpoint takes the ``Request`` alone and is annotated to return a
    ``Response``; any other endpoint is served as usual."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        if (
            self.max_body_size is None
            and takes_request_alone(self.dependant)
            and returns_a_response(endpoint)
        ):
            self.app = request_response(endpoint)


def returns_a_response(endpoint: Callable[..., Any]) -> bool:
    """Whether ``endpoint`` is annotated to return a Starlette ``Response``
    (which FastAPI would pass through untouched)."""
    returned = get_typed_return_annotation(endpoint)
    return isinstance(returned, type) and issubclass(returned, Response)


def takes_request_alone(dependant: Dependant) -> bool:
    """Whether an endpoint's only parameter is the ``Request``."""
    return dependant.request_param_name is not None and not (
        dependant.path_params
        or dependant.query_params
        or dependant.header_params
        or dependant.cookie_params
        or dependant.body_params
        or dependant.dependencies
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.security_scopes_param_name
    )
