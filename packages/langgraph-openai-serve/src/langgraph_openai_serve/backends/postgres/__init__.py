"""The PostgreSQL backend: one object owning the pool, the whole schema and
its migrations, the procrastinate app and every PostgreSQL store
(``PostgresBackend``). Needs the ``postgres`` extra."""

from langgraph_openai_serve.backends.postgres.backend import PostgresBackend

__all__ = ["PostgresBackend"]
