"""Debian's Chromium for Playwright: where it is and how it starts headless.

Playwright's own browser builds cannot be downloaded on these machines
(``playwright install`` fails), so the suite launches the distribution's
``chromium`` through ``executable_path``.
"""

from __future__ import annotations

import shutil
from typing import Any

INSTALL_HINT = (
    "Debian's chromium is not installed: run `uv run just e2e` (it installs it "
    "as root or through sudo) or `sudo apt-get install -y chromium`."
)

# Without the networking flags Chromium's own background connections (updates,
# sync, safe browsing) fail noisily on an offline machine.
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)


class ChromiumMissing(RuntimeError):
    """No ``chromium`` on PATH."""


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        raise ChromiumMissing(INSTALL_HINT)
    return found


def launch_args(base: dict[str, Any]) -> dict[str, Any]:
    """pytest-playwright's launch arguments, pointed at Debian's Chromium."""
    return {
        **base,
        "executable_path": chromium_path(),
        "headless": True,
        "args": [*base.get("args", []), *CHROMIUM_FLAGS],
    }
