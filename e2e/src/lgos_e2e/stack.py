"""What the browser suite's stack runs with.

The stack is started and stopped by ``lgos_testkit.stack`` (shared with the
demos' tests); this module holds only the suite's own choices.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

STARTUP_SECONDS = 240.0
"""Open WebUI alone takes ~30 s to start on a quiet machine; ours is shared."""


def stack_env(base: Mapping[str, str] = os.environ, **extra: str) -> dict[str, str]:
    """``base`` without settings that would point the stack elsewhere."""
    prefixes = ("DEMO_", "LGOS_", "LITELLM_", "OPENAI_", "WEBUI_", "CHAINLIT_")
    env = {k: v for k, v in base.items() if not k.startswith(prefixes)}
    return env | extra
