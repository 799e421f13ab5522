"""The Batch API's own home: a JSONL file of requests run over the graphs.

``protocol`` (the store and queue contracts, the steps), ``memory`` (this
process), ``postgres`` (PostgreSQL and procrastinate's queue), ``objects``
(the Batch object and output lines), ``input`` (the streamed validation of
the input file), ``files`` (the Files API client), ``dispatch`` (one line
through the OpenAI app, as an in-process request), ``steps`` (create,
validate, run a chunk of lines, cancel), ``finalize`` (settle, write the
files, end) and ``expiry`` (the sweep for batches past their window). The
wire routes are ``openai/batches/``; the design is in
``docs/explanation/design.md``.
"""
