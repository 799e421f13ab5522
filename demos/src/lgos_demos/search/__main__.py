"""``lgos-demo-search``: serve the offline search with uvicorn."""

from __future__ import annotations

import argparse

import uvicorn

from lgos_demos.search.app import create_app
from lgos_demos.settings import DEFAULT_SEARCH_PORT


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve SearXNG's JSON search API over the bundled LGOS docs."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_SEARCH_PORT)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    uvicorn.run(create_app(), host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
