"""Background runs on PostgreSQL: the response store and procrastinate's queue."""
