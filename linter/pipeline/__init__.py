"""The Spark pipeline: ``krpc-lint audit`` (a repository's whole history) and ``krpc-lint replay``
(captured traffic against a spec change). See docs/pipeline.md.

PySpark is the optional extra ``krpc-lint[spark]``: nothing outside this package imports it, and
inside it only the modules that run Spark jobs do, lazily, so the pure parts (git history
extraction, frame replay per frame, the HTML report) work and are tested without it.
"""
