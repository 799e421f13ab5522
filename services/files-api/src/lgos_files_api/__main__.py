"""``lgos-files-api``: serve the Files API with uvicorn."""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn
from pydantic import ValidationError

from lgos_files_api.app import create_app
from lgos_files_api.settings import Settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve the LGOS Files API (OpenAI /v1/files on S3). "
        "Configure it with LGOS_FILES_* environment variables."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        # Fail before binding the port, naming each bad or missing variable.
        sys.exit(f"lgos-files-api: invalid configuration:\n{exc}")
    logging.basicConfig(
        level=args.log_level.upper(), format="%(levelname)s %(message)s"
    )
    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
    )


if __name__ == "__main__":
    main()
