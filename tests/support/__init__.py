"""Helpers shared by the tests: git repositories, rule packs, hypothesis strategies, Kafka headers, a
Spark cluster, hostile-output checks. Imported as ``support.NAME`` (``tests/`` is on the path)."""
