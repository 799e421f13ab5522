"""``lgos-demo-model``: serve the offline demo model with uvicorn."""

from __future__ import annotations

import argparse

import uvicorn

from lgos_demos.demo_model.app import create_app
from lgos_demos.settings import DEFAULT_MODEL_PORT, DemoSettings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Serve the offline demo model (OpenAI Chat Completions). "
        "DEMO_MODEL_TOKEN_DELAY sets the seconds between streamed tokens."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_MODEL_PORT)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    settings = DemoSettings()
    app = create_app(
        model_name=settings.MODEL_NAME, token_delay=settings.MODEL_TOKEN_DELAY
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
