"""The host app LGOS builds when it is given none.

Without a shortcut, a request for the OpenAI prefix crosses two FastAPI
apps: the host's hook for FastAPI's telemetry and its middleware (server
errors, telemetry, body limit, exception handlers, exit stack), its router
trying each of the host's routes in turn, the mount, and then the OpenAI
app's own hook, middleware and router, which do all of that again. The
mounted app answers every error of its requests itself (its request-context
middleware turns any exception into the error envelope), so the host's
layers only cost time there: about 3.5% of a non-streamed request's
instructions (``lgos-bench instructions``).

``HostApp`` hands such a request to the mount at once, as the host's router
would, when nothing of the host's own could see it: no middleware was added
to the host, and every route ahead of the mount has a fixed path outside the
prefix (the operations routes, and FastAPI's docs on a host that has them),
so none could match it. The
decision is taken when the host builds its middleware stack (its first
request; middleware cannot be added after that). Any other request, and
every request of a host that does not qualify, takes the usual way.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.routing import Match, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send


class HostApp(FastAPI):
    """A FastAPI app that passes requests for a mounted app straight to it
    when its own middleware and routes could not see them."""

    _direct_mount: Mount | None = None
    """The mount requests go to directly; ``None`` until the middleware
    stack is built, and for good when the host does not qualify."""
    _candidate_mount: Mount | None = None

    def serve_directly(self, mount: Mount) -> None:
        """Let requests ``mount`` matches skip the host's own layers, if the
        host qualifies once it starts serving."""
        self._candidate_mount = mount

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        mount = self._candidate_mount
        if mount is not None and self._nothing_ahead_of(mount):
            self._direct_mount = mount
        return stack

    def _nothing_ahead_of(self, mount: Mount) -> bool:
        if self.user_middleware or self.root_path or mount not in self.routes:
            return False
        prefix = mount.path
        if not prefix:
            return False  # the mount takes every path
        ahead = self.routes[: self.routes.index(mount)]
        return all(
            isinstance(route, Route)
            and "{" not in route.path
            and route.path != prefix
            and not route.path.startswith(prefix + "/")
            for route in ahead
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        mount = self._direct_mount
        if mount is not None and scope["type"] == "http":
            match, child_scope = mount.matches(scope)
            if match is Match.FULL:
                # What the host's app and router would have set on the way.
                scope["app"] = self
                scope.setdefault("router", self.router)
                scope.update(child_scope)
                await mount.handle(scope, receive, send)
                return
        await super().__call__(scope, receive, send)
