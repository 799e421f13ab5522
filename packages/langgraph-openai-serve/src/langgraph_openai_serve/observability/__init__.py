"""What a running fleet shows an operator: Prometheus metrics and OpenTelemetry spans.

The request path calls into this package, never the reverse: it imports no
other part of the core (an import contract keeps it so). Each surface has its
own module feeding prometheus-client's registry (``http``, ``runs``,
``queue``); ``exposition`` serves ``GET /metrics`` (one process, or every
process of ``lgos serve --workers N`` through the library's multiprocess
mode); ``tracing`` and ``graph_spans`` make the OpenTelemetry spans, only
when the standard ``OTEL_*`` variables ask for them.
"""
