"""What the browser suite's stack runs with.

The stack is started and stopped by ``lgos_testkit.stack`` (shared with the
demos' and the stack's tests), with its environment (``stack_env``); this
module holds only the suite's own choices.
"""

from __future__ import annotations

STARTUP_SECONDS = 240.0
"""Open WebUI alone takes ~30 s to start on a quiet machine; ours is shared."""

PLAIN_MODELS = ("lgos/citations", "lgos/simple")
"""The graphs Open WebUI's own (Chat Completions) connection lists in the
suite, as an operator may choose; the LGOS Function lists the others."""

CHAINLIT_MAX_MESSAGE_BYTES = 128 * 1024
"""The suite's Chainlit message limit (2 MiB by default), so a journey can
type a message over it: Chromium stalls submitting a composer of about a
megabyte. Above the 100 KB document the pasted-document journey sends."""
