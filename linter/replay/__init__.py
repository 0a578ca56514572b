"""``krpc-lint replay``: captured frames decoded under two spec revisions, and what changes between them."""
