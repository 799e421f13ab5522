"""Signed webhooks: the events LGOS sends when long work ends.

``protocol`` (the ``Announce`` entry every producer calls), ``events``
(OpenAI's event payload), ``delivery`` (one signed POST, Standard Webhooks
via the ``standardwebhooks`` library), ``service`` (``Webhooks``: from event
to deliveries) and ``sender`` (deliveries as jobs of the deployment's queue,
retried with back-off; on PostgreSQL surviving lost workers). Endpoints are
the deployment's (``LGOS_WEBHOOK_*``); each names the tenants (scopes) whose
events it receives, and each receiver signs with a secret of its own.
"""
