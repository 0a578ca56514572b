"""``krpc-lint readiness``: which clients break on a target Kafka release, from what they really sent (issue 28)."""
