#!/usr/bin/env python3
"""``lgos-healthcheck``: the container healthcheck of the workspace images.

    lgos-healthcheck http://127.0.0.1:8100/health   healthy on any 2xx answer
    lgos-healthcheck env:LGOS_DATABASE_URL          healthy when the PostgreSQL
                                                    URL in that variable answers
                                                    ``SELECT 1``

The slim Python images carry no curl, and a plain ``python -c`` one-liner in
every compose healthcheck would hide what is checked. Exit code 0 is healthy,
1 is not (with the reason on stderr, which ``docker inspect`` shows). The
``env:`` form keeps a password out of the healthcheck's command line.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 3.0


def check_http(url: str) -> str | None:
    """``None`` when ``url`` answers 2xx, else the reason it is unhealthy."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        return f"{url} answered {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return f"{url} is unreachable: {exc}"
    return None if 200 <= status < 300 else f"{url} answered {status}"


def check_postgres(variable: str) -> str | None:
    """``None`` when the database named by ``$variable`` answers a query."""
    url = os.environ.get(variable)
    if not url:
        return f"{variable} is not set"
    import psycopg  # only the images that talk to PostgreSQL carry it

    try:
        with psycopg.connect(url, connect_timeout=int(TIMEOUT_SECONDS)) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"the database in {variable} does not answer: {exc}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: lgos-healthcheck URL | env:DATABASE_URL_VARIABLE\n")
        return 2
    target = argv[0]
    if target.startswith("env:"):
        problem = check_postgres(target.removeprefix("env:"))
    elif target.startswith(("http://", "https://")):
        problem = check_http(target)
    else:
        sys.stderr.write(f"lgos-healthcheck: not a URL or env:NAME: {target}\n")
        return 2
    if problem is not None:
        sys.stderr.write(f"unhealthy: {problem}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
