"""``lgos-open-webui-sync``: install LGOS's Functions into a running Open WebUI.

Exit codes: 0 in step (now, or already); 2 bad usage, or Open WebUI could not
be reached or refused a request (a clear message on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import httpx

from lgos_open_webui.bundle import function_sources
from lgos_open_webui.openwebui import (
    NO_AUTH_EMAIL,
    NO_AUTH_PASSWORD,
    OpenWebUI,
    OpenWebUIError,
    wait_until_healthy,
)
from lgos_open_webui.sync import apply, plan_sync

EXIT_OK = 0
EXIT_ERROR = 2
_PROG = "lgos-open-webui-sync"

# flag -> (environment variable, valve it sets; None: not a valve)
_SETTINGS: dict[str, tuple[str, str | None]] = {
    "url": ("LGOS_OPEN_WEBUI_URL", None),
    "token": ("LGOS_OPEN_WEBUI_TOKEN", None),
    "email": ("LGOS_OPEN_WEBUI_EMAIL", None),
    "password": ("LGOS_OPEN_WEBUI_PASSWORD", None),
    "gateway_url": ("LGOS_OPEN_WEBUI_GATEWAY_URL", "gateway_url"),
    "gateway_key": ("LGOS_OPEN_WEBUI_GATEWAY_KEY", "gateway_key"),
    "files_url": ("LGOS_OPEN_WEBUI_FILES_URL", "files_url"),
    "files_key": ("LGOS_OPEN_WEBUI_FILES_KEY", "files_key"),
    "models": ("LGOS_OPEN_WEBUI_MODELS", "models"),
    "skip_models": ("LGOS_OPEN_WEBUI_SKIP_MODELS", "skip_models"),
    "attachments_url": ("LGOS_OPEN_WEBUI_ATTACHMENTS_URL", "open_webui_url"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Install or update LGOS's Open WebUI Functions through Open "
        "WebUI's own API, set their valves and activate them; delete the ones "
        "this command installed that the repository no longer has. Every flag "
        "also reads the environment variable named in its help.",
    )

    def option(flag: str, text: str) -> None:
        env = _SETTINGS[flag.removeprefix("--").replace("-", "_")][0]
        parser.add_argument(flag, help=f"{text} (${env})")

    option("--url", "Open WebUI's base URL, e.g. http://127.0.0.1:8080")
    option("--token", "an admin's API key or session token")
    option(
        "--email",
        "sign in as this admin instead of --token (default without a token: "
        f"{NO_AUTH_EMAIL}, which works when Open WebUI runs with WEBUI_AUTH=False)",
    )
    option("--password", "the admin's password")
    option("--gateway-url", "valve: LiteLLM's OpenAI base URL (…/v1)")
    option(
        "--gateway-key",
        "valve: the LiteLLM UI key the Function uses (never the master key: "
        "with WEBUI_AUTH=False every user reads the valves)",
    )
    option("--files-url", "valve: the Files API base URL (…/v1)")
    option("--files-key", "valve: the Files API gateway key (acts for each user)")
    option("--models", "valve: comma-separated models to offer (empty: all)")
    option(
        "--skip-models",
        "valve: comma-separated models Open WebUI's own connection lists, "
        "left out of the Function so each is listed once",
    )
    option(
        "--attachments-url",
        "valve: Open WebUI's address as the Function reaches it, where it "
        "reads attachments back as the user (default: --url)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the changes, make none"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per request (30)"
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to this long for Open WebUI's /health (0: do not wait)",
    )
    return parser


def _resolve(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, (env, _) in _SETTINGS.items():
        given = getattr(args, name)
        values[name] = given if given is not None else environ.get(env)
    return values


def _token(http: httpx.Client, values: Mapping[str, Any]) -> str:
    if values["token"]:
        return str(values["token"])
    email = values["email"] or NO_AUTH_EMAIL
    password = values["password"] or NO_AUTH_PASSWORD
    return OpenWebUI.sign_in(http, values["url"], email, password)


def run(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str],
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    try:
        args = _parser().parse_args(list(argv))
    except SystemExit as exit_:
        return EXIT_OK if exit_.code == 0 else EXIT_ERROR
    values = _resolve(args, environ)
    if not values["url"]:
        print(f"{_PROG}: give --url or $LGOS_OPEN_WEBUI_URL", file=stderr)
        return EXIT_ERROR
    # The Function never trusts the address a chat request came in on.
    values["attachments_url"] = values["attachments_url"] or values["url"]
    valves = {
        valve: values[name]
        for name, (_, valve) in _SETTINGS.items()
        if valve is not None and values[name] is not None
    }
    try:
        with httpx.Client(timeout=args.timeout) as http:
            if args.wait > 0:
                wait_until_healthy(http, values["url"], args.wait)
            api = OpenWebUI(http, values["url"], _token(http, values))
            api.check_admin()
            plan = plan_sync(api, function_sources(), valves)
            if not plan.changes:
                print(f"Open WebUI at {values['url']} is up to date.", file=stdout)
                return EXIT_OK
            verb = "would" if args.dry_run else "will"
            for change in plan.changes:
                print(f"{verb} {change.describe()}", file=stdout)
            if not args.dry_run:
                apply(api, plan)
                print(f"{len(plan.changes)} change(s) made.", file=stdout)
    except OpenWebUIError as exc:
        print(f"{_PROG}: {exc}", file=stderr)
        return EXIT_ERROR
    return EXIT_OK


def main() -> None:
    sys.exit(
        run(sys.argv[1:], environ=os.environ, stdout=sys.stdout, stderr=sys.stderr)
    )
