"""Names from the LGOS reference that still work, with a warning.

Code written against the reference must run unchanged; each old name warns
once per call site with ``DeprecationWarning`` and names its replacement.
"""

from __future__ import annotations

import warnings


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated in favour of ``new``.

    ``stacklevel`` counts from the caller of this function: the default
    points at the code that called the deprecated API.
    """
    warnings.warn(
        f"{old} is deprecated; use {new} instead.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
