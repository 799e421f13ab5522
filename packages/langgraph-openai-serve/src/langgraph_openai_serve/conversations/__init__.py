"""Conversations kept with the Responses (``LGOS_RESPONSE_STORE``)."""
