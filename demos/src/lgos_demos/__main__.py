"""``lgos-demo-api``: serve the demo API with uvicorn."""

from __future__ import annotations

import argparse

import uvicorn


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the LGOS demo API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(
        "lgos_demos.app:create_app", factory=True, host=args.host, port=args.port
    )


if __name__ == "__main__":
    main()
