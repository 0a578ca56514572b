"""A user's rule pack for the tests of rules and checks: a request spec, and rules that call a named check."""

from __future__ import annotations

import textwrap

SPEC = ('{"name": "Example", "type": "request", "apiKey": 99, "validVersions": "0", "flexibleVersions": "0+", '
        '"fields": [{"name": "Id", "type": "int32", "versions": "0+"}]}')


def rule_yaml(check: str, rule_id: str = "ACME101", name: str = "acme-request-suffix") -> str:
    """A user's rule calling a named check; ``check`` is the YAML of its ``check:`` mapping."""
    return textwrap.dedent(f"""\
        id: {rule_id}
        name: {name}
        title: Requests end in Request
        severity: warning
        category: naming
        profiles: [recommended, strict]
        rationale: Tools find a request by its suffix.
        check:
        """) + textwrap.indent(textwrap.dedent(check), "  ")
