"""LGOS's Response id inside the id LiteLLM hands out for it.

LiteLLM answers with its own Response ids: ``resp_`` and the base64 of
``litellm:custom_llm_provider:<p>;model_id:<m>;response_id:<upstream id>``
(readable while its response-id encryption is off, as in the stack's gateway
configuration). Following a background run goes to LGOS itself through the
gateway's pass-through route, which wants LGOS's id. The Open WebUI Function
keeps a copy of this function (it must stay one file); both are tested on
ids a real LiteLLM proxy issued.
"""

from __future__ import annotations

import base64
import binascii

_PREFIX = "resp_"
_LITELLM_MARK = "litellm:custom_llm_provider:"
_UPSTREAM_FIELD = ";response_id:"


def upstream_response_id(response_id: str) -> str:
    """The upstream (LGOS) id a LiteLLM Response id carries; any other id as
    it is (an LGOS id reached directly, or one LiteLLM encrypted)."""
    if not response_id.startswith(_PREFIX):
        return response_id
    try:
        decoded = base64.b64decode(response_id[len(_PREFIX) :], validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return response_id
    if not text.startswith(_LITELLM_MARK):
        return response_id
    _, found, upstream = text.partition(_UPSTREAM_FIELD)
    return upstream if found and upstream else response_id
