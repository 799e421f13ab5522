"""``item_reference`` input items: the kept items they name, in their place.

Clients that expect the server to keep what it answered (the Vercel AI
SDK's ``openai(...)`` model, unless told ``store: false``) send an earlier
answer back as ``{"type": "item_reference", "id": "msg_..."}``. With a
response store, each reference becomes the output item it names, from the
caller's own kept Responses, before anything else reads the request; the
rest of the request path sees what a client replaying the items would send.
An id that is unknown, deleted or another tenant's is the same 400. Without
a store nothing is kept to name: ``decode`` refuses the reference and says
what to do instead.
"""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.schemas import (
    InputItem,
    ItemReference,
    ResponseCreateRequest,
)
from langgraph_openai_serve.responses.protocol import ResponseStore

_ITEM: TypeAdapter[InputItem] = TypeAdapter(InputItem)

WITHOUT_STORE = (
    "This server keeps no Responses, so an item_reference names nothing; send "
    "the item itself (with the Vercel AI SDK: providerOptions.openai.store = "
    "false), or run LGOS with a response store (LGOS_RESPONSE_STORE)."
)


def references_in(body: ResponseCreateRequest) -> list[tuple[int, ItemReference]]:
    """The ``item_reference`` items of ``body``'s input, with their index."""
    if isinstance(body.input, str):
        return []
    return [
        (index, item)
        for index, item in enumerate(body.input)
        if isinstance(item, ItemReference)
    ]


async def with_references_resolved(
    store: ResponseStore, body: ResponseCreateRequest, scope: str
) -> ResponseCreateRequest:
    """``body`` with each ``item_reference`` replaced by the kept item it
    names (``body`` itself when it has none).

    Raises:
        InvalidRequestError: (``input[i].id``) no output item of the
            caller's kept Responses has that id, or the item cannot be
            given to a graph.
    """
    references = references_in(body)
    if not references:
        return body
    found = await store.output_items([ref.id for _, ref in references], scope)
    items = list(body.input)
    for index, reference in references:
        kept = found.get(reference.id)
        param = f"input[{index}].id"
        if kept is None:
            raise InvalidRequestError(
                f"Item with id '{reference.id}' not found.", param=param
            )
        try:
            items[index] = _ITEM.validate_python(kept)
        except ValidationError:
            raise InvalidRequestError(
                f"Item '{reference.id}' cannot be given to a graph as input.",
                param=param,
            ) from None
    return body.model_copy(update={"input": items})
