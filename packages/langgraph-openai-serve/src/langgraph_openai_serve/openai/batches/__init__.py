"""``/batches``: the Batch API's wire schemas and routes (the work is in
``langgraph_openai_serve.batches``)."""
