"""Render a ``Report`` for people (text), programs (json), code scanning (sarif), GitHub Actions
annotations (github) and CI test dashboards (junit).

Every renderer returns the whole output as one string. Heavy imports (rich, xml.etree,
importlib.metadata) happen only in the format that needs them, so the CLI starts fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linter.engine.findings import Finding, Report
    from linter.engine.rules import Rule

from linter.escape import guard_lines, json_text, lead_path, printable
from linter.vocabulary import FORMATS, TOOL_NAME, plural, tool_version

INFORMATION_URI = "https://pypi.org/project/krpc-lint/"
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: Key order of one finding in the JSON output (documented in docs/json-output.md).
JSON_FINDING_KEYS = ("rule", "name", "severity", "category", "path", "line", "col", "message", "hint")
COMPAT_KEYS = ("message_name", "versions", "released", "witness")  # krpc-lint compat findings only

SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# Characters XML 1.0 cannot carry at all, even escaped.
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render(report: Report, fmt: str, *, color: bool = False, rules: dict[str, Rule] | None = None,
           files: list[str] | None = None) -> str:
    """The report in format ``fmt`` (one of ``FORMATS``).

    ``color`` applies to ``text``; ``rules`` (id -> Rule) describes the rules in ``sarif``;
    ``files`` (display paths of every linted file) gives ``junit`` its passing test cases.
    """
    renderers: dict[str, Callable[[], str]] = {
        "text": lambda: render_text(report, color=color),
        "json": lambda: render_json(report),
        "sarif": lambda: render_sarif(report, rules),
        "github": lambda: render_github(report),
        "junit": lambda: render_junit(report, files),
    }
    if fmt not in renderers:
        raise ValueError(f"unknown output format {fmt!r} (choose from {', '.join(FORMATS)})")
    return renderers[fmt]()


def rule_label(finding: Finding) -> str:
    """``KL301 [field-name-pattern]``: the rule as findings name it in text, github and junit (a rule pack's ids
    and names are as untrusted as a spec: callers escape the label for their format)."""
    return f"{finding.rule} [{finding.name}]" if finding.name else finding.rule


def summary_line(report: Report) -> str:
    """``Found 3 errors, 1 warning in 258 files.`` or ``All checks passed: 258 files.``"""
    summary = report.summary
    files = plural(summary["files"], "file")
    hidden = [f"{summary[key]} {key}" for key in ("suppressed", "baselined") if summary[key]]
    if summary.get("skipped"):
        hidden.append(f"{plural(summary['skipped'], 'other JSON file')} skipped")
    tail = f" ({', '.join(hidden)})" if hidden else ""
    if not report.findings:
        return f"All checks passed: {files}{tail}."
    counts = [(summary["errors"], "error"), (summary["warnings"], "warning"), (summary["infos"], "info")]
    found = ", ".join(plural(count, word) for count, word in counts if count)
    return f"Found {found} in {files}{tail}."


# --- text ----------------------------------------------------------------------------------

Segments = list[tuple[str, str]]  # (text, rich style); style "" is plain


def _text_lines(report: Report) -> Iterable[Segments]:
    """Each finding's lines: every piece from the input (path, rule label, message, hint, witness) made
    ``printable``, so none adds a line, a control sequence or a workflow command (a path that would start its
    line with ``::`` is shown as ``./::...``)."""
    for finding in report.findings:
        yield [(f"{lead_path(finding.path)}:{finding.line}:{finding.col}:", "bold"), (" ", ""),
               (printable(rule_label(finding)), SEVERITY_STYLE.get(finding.severity, "")),
               (f" {printable(finding.message)}", "")]
        if finding.hint:
            yield [("  hint: ", "dim"), (printable(" ".join(finding.hint.split())), "")]
        if finding.witness:
            yield from _witness_lines(finding.witness)
    summary = report.summary
    style = "bold red" if summary["errors"] else "yellow" if report.findings else "green"
    yield [(summary_line(report), style)]


def _witness_lines(witness: dict[str, Any]) -> Iterable[Segments]:
    """The proof of a wire break: who wrote which bytes at which version, and what the other read."""
    writer = printable(str(witness.get("writer", "old")))
    data = str(witness.get("hex", ""))  # the bytes as krpc-lint wrote them: only the shown part is checked
    length = witness.get("length")  # the whole message's; the hex of a long one is an excerpt
    size = length if isinstance(length, int) else len(data) // 2
    shown = printable(data) if len(data) <= 96 else f"{printable(data[:96])}... ({size} bytes)"
    yield [("  witness: ", "dim"),
           (f"v{printable(str(witness.get('version')))} written by the {writer} revision: {shown}", "")]
    yield [("           ", ""), (witness_outcome(witness), "")]


def witness_outcome(witness: dict[str, Any]) -> str:
    """What the revision that did not write a witness's bytes does with them (the text report's second
    witness line; the audit's ``witness_reading``)."""
    reader = "old" if witness.get("writer") == "new" else "new"
    if witness.get("error"):
        return f"the {reader} revision fails: {printable(str(witness['error']))}"
    return f"the {reader} revision reads it differently: {printable(str(witness.get('reason') or 'another value'))}"


def render_text(report: Report, *, color: bool = False) -> str:
    lines = list(_text_lines(report))
    if not color:
        return guard_lines("".join("".join(text for text, _ in segments) + "\n" for segments in lines))
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=True, no_color=False, color_system="standard",
                      highlight=False, markup=False, emoji=False, soft_wrap=True, width=10_000)
    for segments in lines:
        console.print(Text.assemble(*segments))  # rich styles nothing for "", as for None; Text reads no markup
    return guard_lines(buffer.getvalue())


# --- json ----------------------------------------------------------------------------------


def render_json(report: Report) -> str:
    data = report.to_dict()
    data["findings"] = [{key: item[key] for key in (*JSON_FINDING_KEYS, *COMPAT_KEYS, "fix") if key in item}
                        for item in data["findings"]]
    return json_text(data)


# --- sarif ---------------------------------------------------------------------------------


def artifact_uri(path: str) -> str:
    """A relative path as a relative URI reference with forward slashes; absolute ones as file: URIs."""
    from urllib.parse import quote

    pure = PurePath(path)
    text = pure.as_posix()
    try:  # a name's undecodable bytes (``\udcff``) are percent-encoded as the bytes they were
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    return ("file://" if pure.is_absolute() else "") + quote(raw, safe="/")


def sarif_rule(rule: Rule) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.rationale or rule.title},
        "help": {"text": rule.hint or rule.title},
        "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
        "properties": {"category": rule.category, "profiles": list(rule.profiles), "tags": [rule.category]},
    }
    link = next((ref for ref in rule.references if ref.startswith(("https://", "http://"))), None)
    if link:
        descriptor["helpUri"] = link
    return descriptor


def _sarif_rule_from_finding(finding: Finding) -> dict[str, Any]:
    """A descriptor for a finding whose rule the caller did not describe."""
    return {
        "id": finding.rule,
        "name": finding.name,
        "shortDescription": {"text": finding.name or finding.rule},
        "help": {"text": finding.hint or finding.name or finding.rule},
        "defaultConfiguration": {"level": SARIF_LEVEL[finding.severity]},
        "properties": {"category": finding.category, "tags": [finding.category]},
    }


def message_with_witness(finding: Finding) -> str:
    """The message, and for a wire break its witness as the text report prints it: for a reader that shows the
    message alone (code scanning, whose results carry the witness's fields in their properties; an editor)."""
    if not finding.witness:
        return finding.message
    proof = "\n".join("".join(text for text, _ in line).strip() for line in _witness_lines(finding.witness))
    return f"{finding.message}\n{proof}"


def render_sarif(report: Report, rules: dict[str, Rule] | None = None) -> str:
    by_id = {rule.id: rule for rule in (rules or {}).values()}
    descriptors = [sarif_rule(by_id[rule_id]) for rule_id in sorted(by_id)]
    index = {descriptor["id"]: position for position, descriptor in enumerate(descriptors)}
    for finding in report.findings:
        if finding.rule not in index:
            index[finding.rule] = len(descriptors)
            descriptors.append(_sarif_rule_from_finding(finding))
    results = [{
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": message_with_witness(finding)},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(finding.path)},
                "region": {"startLine": max(1, finding.line), "startColumn": max(1, finding.col)},
            },
        }],
        **({"properties": {"witness": finding.witness}} if finding.witness else {}),
    } for finding in report.findings]
    return sarif_log(descriptors, results, columnKind="unicodeCodePoints")


def sarif_log(descriptors: list[dict[str, Any]], results: list[dict[str, Any]], **run: Any) -> str:
    """A SARIF 2.1.0 log of one run of krpc-lint: its rules' descriptors, its results, and ``run``'s other keys
    (lint's ``columnKind``); what every command's ``--format sarif`` writes."""
    driver = {"name": TOOL_NAME, "version": tool_version(), "informationUri": INFORMATION_URI, "rules": descriptors}
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION,
           "runs": [{"tool": {"driver": driver}, **run, "results": results}]}
    return json_text(log)


# --- github --------------------------------------------------------------------------------


def escape_data(value: str) -> str:
    """GitHub's escaping of a workflow command's message (after ``::``; the runner's ``UnescapeData`` reverses
    ``%25``, ``%0D``, ``%0A``), over the ``printable`` text: a control character or a line break of the input
    shows as its escape, never reaches the log, and the command stays one line."""
    return printable(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """GitHub's escaping of a workflow command's property value (``file=...,title=...``): ``escape_data`` and
    ``:`` as ``%3A``, ``,`` as ``%2C`` (the runner splits properties at ``,`` and the command at ``::``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    lines = []
    for finding in report.findings:
        properties = {
            "file": PurePath(finding.path).as_posix(),
            "line": str(finding.line),
            "col": str(finding.col),
            "title": rule_label(finding),
        }
        props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
        command = _GITHUB_COMMAND.get(finding.severity, "notice")
        lines.append(f"::{command} {props}::{escape_data(finding.message)}\n")
    return "".join(lines)


# --- junit ---------------------------------------------------------------------------------


def _xml_text(value: str) -> str:
    """Text from the input as a JUnit attribute or element: ``printable`` (a CI dashboard shows one line, no
    control characters), then U+FFFE/U+FFFF, which XML cannot carry even escaped, as U+FFFD."""
    return _XML_INVALID.sub("\ufffd", printable(value))


def render_junit(report: Report, files: list[str] | None = None) -> str:
    """One test case per linted file; each error or warning is a ``<failure>`` of its file."""
    import xml.etree.ElementTree as ET

    failing: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.severity in ("error", "warning"):
            failing.setdefault(finding.path, []).append(finding)
    names = list(dict.fromkeys([*(files or ()), *(finding.path for finding in report.findings)]))
    suites = ET.Element("testsuites", name=TOOL_NAME, tests=str(len(names)), failures=str(len(failing)),
                        errors="0")
    suite = ET.SubElement(suites, "testsuite", name=TOOL_NAME, tests=str(len(names)),
                          failures=str(len(failing)), errors="0", skipped="0", time="0")
    for name in names:
        case = ET.SubElement(suite, "testcase", name=_xml_text(name), classname=TOOL_NAME,
                             file=_xml_text(name), time="0")
        for finding in failing.get(name, ()):
            failure = ET.SubElement(case, "failure", type=finding.severity,
                                    message=_xml_text(f"{rule_label(finding)} {finding.message}"))
            failure.text = _xml_text(f"{finding.path}:{finding.line}:{finding.col}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# --- what the GitHub Action writes around the reports ---------------------------------------


def without_commands(text: str) -> str:
    """``text`` (a report for the log) between ``::stop-commands::TOKEN`` and ``::TOKEN::``, GitHub's documented
    way to print text whose lines the runner must not read as commands; the token is random per call, so text
    from the input (itself escaped) cannot end the pause."""
    import secrets

    token = f"krpc-lint-{secrets.token_hex(16)}"
    return f"::stop-commands::{token}\n{text}{'' if text.endswith(chr(10)) or not text else chr(10)}::{token}::\n"


def step_outputs(values: dict[str, object]) -> str:
    """Lines for ``$GITHUB_OUTPUT``: ``key=value`` for a one-line value, else GitHub's ``key<<DELIMITER`` form
    with a random delimiter, so no value (a path from an input) can add a key or end another's value."""
    import secrets

    lines = []
    for key, value in values.items():
        text = str(value)
        if "\n" in text or "\r" in text:
            delimiter = f"krpc-lint-{secrets.token_hex(16)}"
            lines.append(f"{key}<<{delimiter}\n{text}\n{delimiter}\n")
        else:
            lines.append(f"{key}={text}\n")
    return "".join(lines)
