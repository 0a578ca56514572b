"""``krpc-lint audit``: a repository's whole spec history linted and compared, and its report.html."""
