"""Who a chat is for: the signed-in user, named to the gateway and the
Files API in ``x-lgos-end-user``.

LiteLLM forwards the header to LGOS, whose gateway key acts for that user,
and the Files API's gateway key acts for the same user: each Chainlit user
(a password login or a browser's guest) is a tenant of their own, whose
background runs and files no other user reaches. LGOS takes 1-64 letters,
digits, ``_``, ``.`` or ``-``: a login name outside that alphabet (an email
address) is sent as a digest of itself, the same for every session.
"""

from __future__ import annotations

import hashlib
import re

END_USER_HEADER = "x-lgos-end-user"
_END_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def end_user_id(identifier: str) -> str:
    """The id LGOS and the Files API know the user ``identifier`` by."""
    if _END_USER.fullmatch(identifier):
        return identifier
    return "u-" + hashlib.sha256(identifier.encode()).hexdigest()[:32]


def end_user_headers(identifier: str | None) -> dict[str, str]:
    """The header naming ``identifier`` (none without a signed-in user)."""
    return {END_USER_HEADER: end_user_id(identifier)} if identifier else {}
