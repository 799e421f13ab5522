"""Open WebUI's own HTTP API for Functions (``/api/v1/functions``) and sign-in.

Only the routes the sync needs, each answer checked. Every failure is an
``OpenWebUIError`` with the method, URL and what Open WebUI said.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

# With WEBUI_AUTH=False Open WebUI signs every sign-in in as this admin,
# whatever the credentials (routers/auths.py creates it on first use).
NO_AUTH_EMAIL = "admin@localhost"
NO_AUTH_PASSWORD = "admin"


class OpenWebUIError(Exception):
    """Open WebUI could not be reached or refused a request."""


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    return str(detail) if detail else response.text[:300]


def wait_until_healthy(
    http: httpx.Client, base_url: str, seconds: float, pause: float = 1.0
) -> None:
    """Poll ``GET /health`` until it answers 200 or ``seconds`` passed
    (Open WebUI takes 30-60 s to start)."""
    url = base_url.rstrip("/") + "/health"
    deadline = time.monotonic() + seconds
    while True:
        try:
            if http.get(url).status_code == 200:
                return
            problem = "not healthy yet"
        except httpx.HTTPError as exc:
            problem = str(exc) or type(exc).__name__
        if time.monotonic() + pause > deadline:
            raise OpenWebUIError(
                f"{url} did not answer within {seconds:g} s: {problem}"
            )
        time.sleep(pause)


class OpenWebUI:
    """An admin's view of Open WebUI's Functions."""

    def __init__(self, http: httpx.Client, base_url: str, token: str) -> None:
        self._http = http
        self._root = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"}

    @staticmethod
    def sign_in(http: httpx.Client, base_url: str, email: str, password: str) -> str:
        """A session token for ``email``; any credentials work without auth."""
        url = base_url.rstrip("/") + "/api/v1/auths/signin"
        try:
            response = http.post(url, json={"email": email, "password": password})
        except httpx.HTTPError as exc:
            raise OpenWebUIError(f"POST {url} failed: {exc}") from exc
        if response.status_code != 200:
            raise OpenWebUIError(
                f"signing in as {email} failed (HTTP {response.status_code}): "
                f"{_detail(response)}"
            )
        token = response.json().get("token")
        if not isinstance(token, str) or not token:
            raise OpenWebUIError(f"POST {url} returned no token")
        return token

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        url = self._root + path
        try:
            response = self._http.request(method, url, headers=self._headers, json=body)
        except httpx.HTTPError as exc:
            raise OpenWebUIError(f"{method} {url} failed: {exc}") from exc
        if response.status_code != 200:
            raise OpenWebUIError(
                f"{method} {url} answered {response.status_code}: {_detail(response)}"
            )
        return response.json()

    def check_admin(self) -> None:
        """Fail clearly unless the token belongs to an admin."""
        user = self._call("GET", "/api/v1/auths/")
        if user.get("role") != "admin":
            raise OpenWebUIError(
                f"{user.get('email')} is not an admin; installing Functions needs one"
            )

    def functions(self) -> list[dict[str, Any]]:
        """Every Function (without content)."""
        found = self._call("GET", "/api/v1/functions/")
        return [f for f in found if isinstance(f, dict)]

    def function(self, function_id: str) -> dict[str, Any]:
        """One Function with its content."""
        found: dict[str, Any] = self._call("GET", f"/api/v1/functions/id/{function_id}")
        return found

    def create(self, form: dict[str, Any]) -> None:
        self._call("POST", "/api/v1/functions/create", form)

    def update(self, function_id: str, form: dict[str, Any]) -> None:
        self._call("POST", f"/api/v1/functions/id/{function_id}/update", form)

    def delete(self, function_id: str) -> None:
        self._call("DELETE", f"/api/v1/functions/id/{function_id}/delete")

    def valves(self, function_id: str) -> dict[str, Any]:
        found = self._call("GET", f"/api/v1/functions/id/{function_id}/valves")
        return found if isinstance(found, dict) else {}

    def set_valves(self, function_id: str, valves: dict[str, Any]) -> None:
        self._call("POST", f"/api/v1/functions/id/{function_id}/valves/update", valves)

    def toggle(self, function_id: str) -> None:
        """Flip a Function between active and inactive."""
        self._call("POST", f"/api/v1/functions/id/{function_id}/toggle")
