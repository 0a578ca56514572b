"""Shared plumbing of the jobs that may run on Spark (audit, replay, size --frames): the session, atomic
outputs, progress, and the tables' schemas (Spark DDL and Arrow from one source)."""
