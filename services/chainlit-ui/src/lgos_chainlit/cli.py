"""``lgos-chainlit``: start the UI with ``chainlit run``, bound to loopback.

The command checks the ``LGOS_CHAINLIT_*`` settings first (a bad value stops
it before anything starts, naming the variable), prepares the home folder
(``LGOS_CHAINLIT_HOME``, where Chainlit writes ``.chainlit/``, ``.files/`` and
``chainlit.md`` and the UI keeps its chat ledgers), then replaces itself with
``python -m chainlit run <app.py> --headless --host H --port P`` inside it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from lgos_chainlit.config import UIConfig

APP = Path(__file__).with_name("app.py")
DEFAULT_PORT = 8200
WELCOME = """\
# LangGraph OpenAI Serve

Each graph behind the LGOS API is a chat profile: pick one in the selector at
the top left (a new chat starts on `citations`). An empty chat describes the
chosen graph, lists the others and offers prompts to try.

- **Progress** of a request shows above its answer while it runs.
- **Settings** (the button next to the message box) hold the graph's runtime
  settings, its server tools (on in a new chat) and, for graphs that can run
  in the background, the "Run in background" switch.
- **Files**: the paperclip attaches a file for graphs that read files
  (`file-display` charts a CSV).
- **Questions** a graph stops to ask come with one button per choice; your
  choice is written into the chat.
"""
PUBLIC = Path(__file__).with_name("public")
PUBLIC_FILES = {
    # Chainlit serves these from the app root's public/ folder.
    "lgos.svg": ("lgos.svg", "favicon.svg"),
    "logo.svg": ("logo_light.svg", "logo_dark.svg"),
    "lgos.css": ("lgos.css",),
}


def chainlit_command(host: str, port: int, *, watch: bool = False) -> list[str]:
    """The ``chainlit run`` command line for this app."""
    command = [
        sys.executable,
        "-m",
        "chainlit",
        "run",
        str(APP),
        "--headless",
        "--host",
        host,
        "--port",
        str(port),
    ]
    return [*command, "--watch"] if watch else command


def prepare_home(home: Path) -> Path:
    """Create the home folder (a welcome page once; the logo, icon and style
    sheet every time, as they are ours); return its absolute path."""
    home = home.expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    welcome = home / "chainlit.md"
    if not welcome.exists():
        welcome.write_text(WELCOME, encoding="utf-8")
    public = home / "public"
    public.mkdir(exist_ok=True)
    for source, targets in PUBLIC_FILES.items():
        data = (PUBLIC / source).read_bytes()
        for target in targets:
            (public / target).write_bytes(data)
    return home


def auth_secret(home: Path) -> str:
    """The login token secret kept in ``home`` (made once, owner-only)."""
    path = home / ".auth-secret"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lgos-chainlit", description="The Chainlit chat UI for LGOS graphs."
    )
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--home",
        type=Path,
        help="overrides LGOS_CHAINLIT_HOME (default .lgos-chainlit)",
    )
    parser.add_argument("--watch", action="store_true", help="reload on code changes")
    args = parser.parse_args(argv)
    try:
        config = UIConfig()
    except ValidationError as exc:
        parser.exit(2, f"lgos-chainlit: invalid settings:\n{exc}\n")
    home = prepare_home(args.home or config.HOME)
    env = {**os.environ, "LGOS_CHAINLIT_HOME": str(home)}
    if config.signs_in and not env.get("CHAINLIT_AUTH_SECRET"):
        env["CHAINLIT_AUTH_SECRET"] = auth_secret(home)
    env.pop("CHAINLIT_APP_ROOT", None)
    os.chdir(home)
    os.execve(
        sys.executable, chainlit_command(args.host, args.port, watch=args.watch), env
    )
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
