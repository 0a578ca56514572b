"""``krpc-lint conformance`` as text (a summary table, then what is not identical) and as Markdown (a PR
comment or ``$GITHUB_STEP_SUMMARY``). JSON is ``Conformance.to_dict``."""

from __future__ import annotations

from typing import Any

from linter.compat.change import version_ranges
from linter.compat.conformance import (
    DIVERGES,
    IDENTICAL,
    VENDOR_ONLY,
    VERDICTS,
    ApiConformance,
    Conformance,
    VersionVerdict,
)
from linter.engine.findings import Finding, Report
from linter.escape import guard_lines, markdown_code, markdown_text, printable

_COLUMNS = ("identical", "compatible", "semantic", "diverges", "vendor-only", "upstream-only")


def _row(api: ApiConformance) -> list[str]:
    counts = api.counts()
    return [printable(api.name), printable(api.type or ""), "" if api.api_key is None else str(api.api_key),
            *(str(counts[v] or "") for v in VERDICTS), str(len(api.upstream_only_versions) or "")]


def _ranges(versions: list[int]) -> str:
    return version_ranges(sorted(versions)) if versions else ""


def _declared(result: Conformance) -> list[ApiConformance]:
    return [api for api in result.apis if api.vendor_file is not None]


def _findings(api: ApiConformance) -> list[VersionVerdict]:
    return [v for v in api.versions if v.verdict not in (IDENTICAL, VENDOR_ONLY)]


def _totals(result: Conformance) -> str:
    summary = result.summary()
    parts = [f"{summary[v]} {v}" for v in VERDICTS]
    parts.append(f"{summary['upstream_only_versions']} upstream-only version(s)")
    if result.unclassified:
        parts.append(f"{summary['unclassified']} unclassified version(s)")
    if result.errors:
        parts.append(f"{summary['errors']} error(s)")
    return (f"{summary['apis'] - summary['upstream_only_apis']} vendor messages against {printable(result.upstream)}: "
            + ", ".join(parts))


def to_text(result: Conformance) -> str:
    """The summary table, then each API's versions that are not identical; every name, path and message from the
    specs ``printable``, and no line that starts a workflow command."""
    header = ["message", "type", "apiKey", *_COLUMNS]
    rows = [_row(api) for api in _declared(result)]
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = [f"Conformance of {printable(result.vendor)} with {printable(result.upstream)}", ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in (header, *rows)]
    lines.append("")
    for api in _declared(result):
        findings = _findings(api)
        vendor_only = [v.version for v in api.versions if v.verdict == VENDOR_ONLY]
        if not findings and not vendor_only:
            continue
        lines.append(f"{printable(api.name)} ({printable(api.vendor_file or '')})")
        if vendor_only:
            lines.append(f"  v{_ranges(vendor_only)}: vendor-only")
        for verdict in findings:
            lines.append(f"  v{verdict.version}: {verdict.verdict}")
            for change in verdict.details:
                lines.append(f"    {printable(change.rule)}: {printable(change.message)}")
                if change.witness is not None:
                    lines.append(f"      witness ({change.witness.writer} writes): {printable(change.witness.hex)}")
    upstream_only = [printable(api.name) for api in result.apis if api.vendor_file is None]
    if upstream_only:
        lines.append(f"Upstream-only messages ({len(upstream_only)}): {', '.join(upstream_only)}")
    coverage = [f"{printable(api.name)} v{_ranges(api.upstream_only_versions)}" for api in _declared(result)
                if api.upstream_only_versions]
    if coverage:
        lines.append(f"Upstream versions not declared: {'; '.join(coverage)}")
    lines += [f"unclassified: {printable(u.api)} (apiKey {u.api_key}) v{_ranges(list(u.versions))}: "
              f"{printable(u.reason)}" for u in result.unclassified]
    lines += [f"error: {printable(e.file)} ({e.side}): {printable(e.message)}" for e in result.errors]
    lines.append(_totals(result))
    if result.since_upstream is not None:
        lines += ["", result.since_upstream.to_markdown().rstrip()]
    return guard_lines("\n".join(lines) + "\n")


_md = markdown_text


def to_markdown(result: Conformance) -> str:
    summary = result.summary()
    lines = [f"# Conformance: {_md(result.vendor)} against {_md(result.upstream)}", "",
             "| verdict | versions |", "| --- | ---: |"]
    lines += [f"| {verdict} | {summary[verdict]} |" for verdict in VERDICTS]
    lines += [f"| upstream-only | {summary['upstream_only_versions']} |",
              f"| unclassified | {summary['unclassified']} |", ""]
    flagged = [api for api in _declared(result) if _findings(api)]
    if flagged:
        lines += ["## Versions that differ", "", "| message | apiKey | version | verdict | what |",
                  "| --- | ---: | ---: | --- | --- |"]
        for api in flagged:
            for verdict in _findings(api):
                what = "; ".join(f"`{c.rule}` {_md(c.message)}" for c in verdict.details if c.rule)
                mark = "**diverges**" if verdict.verdict == DIVERGES else verdict.verdict
                lines.append(f"| {_md(api.name)} | {api.api_key if api.api_key is not None else ''} | "
                             f"{verdict.version} | {mark} | {what} |")
        lines.append("")
        witnesses = [(api, v, c) for api in flagged for v in _findings(api) for c in v.details if c.witness]
        if witnesses:
            lines += ["<details><summary>Witness bytes</summary>", ""]
            lines += [f"- {_md(api.name)} v{v.version}: written by {c.witness.writer}: `{printable(c.witness.hex)}`"
                      for api, v, c in witnesses if c.witness is not None]
            lines += ["", "</details>", ""]
    vendor_only = [f"{_md(a.name)} v{_ranges([v.version for v in a.versions if v.verdict == VENDOR_ONLY])}"
                   for a in _declared(result) if any(v.verdict == VENDOR_ONLY for v in a.versions)]
    if vendor_only:
        lines += ["## Vendor-only", "", ", ".join(vendor_only), ""]
    if result.unclassified:
        lines += ["## Unclassified", ""]
        lines += [f"- **{_md(u.api)}** (apiKey {u.api_key}) v{_ranges(list(u.versions))}: {_md(u.reason)}"
                  for u in result.unclassified]
        lines.append("")
    if result.errors:
        lines += ["## Not compared", ""] + [f"- {markdown_code(e.file)} ({e.side}): {_md(e.message)}"
                                            for e in result.errors]
        lines.append("")
    lines.append(_md(_totals(result)))
    if result.since_upstream is not None:
        lines += ["", result.since_upstream.to_markdown().rstrip()]
    return guard_lines("\n".join(lines) + "\n")


def to_report(result: Conformance, fail_on: frozenset[str]) -> Report:
    """The versions that are not identical as findings (rule ``conformance/<verdict>``, at the vendor's file),
    for SARIF: what ``fail_on`` names is an error, the rest a note."""
    findings = []
    for api in _declared(result):
        for verdict in _findings(api):
            what = "; ".join(change.message for change in verdict.details) or f"{verdict.verdict} from upstream"
            witness = next((c.witness.to_dict() for c in verdict.details if c.witness is not None), None)
            findings.append(_finding(api.vendor_file or result.vendor, verdict.verdict, fail_on,
                                     f"{api.name} v{verdict.version} {verdict.verdict}: {what}", witness))
    for item in result.unclassified:
        findings.append(_finding(result.vendor, "unclassified", fail_on,
                                 f"{item.api} v{_ranges(list(item.versions))} is unclassified: {item.reason}"))
    for issue in result.errors:
        findings.append(_finding(issue.file, "error", fail_on, f"not compared ({issue.side}): {issue.message}"))
    return Report(sorted(findings), files=len(_declared(result)))


def _finding(path: str, verdict: str, fail_on: frozenset[str], message: str,
             witness: dict[str, Any] | None = None) -> Finding:
    return Finding(path, 1, 1, f"conformance/{verdict}", verdict, "error" if verdict in fail_on else "info",
                   "conformance", message, _HINTS.get(verdict, ""), witness=witness)


_HINTS = {
    DIVERGES: "Make the version's layout upstream's, or stop declaring the version (upstream-only is coverage).",
    "semantic": "A field absent on the wire decodes to another default: align the default with upstream.",
    "compatible": "Bytes interoperate; align the tagged fields with upstream when the copy should be exact.",
    "unclassified": "Classify the API in the manifest: supported (versions), passthrough or unsupported.",
}
