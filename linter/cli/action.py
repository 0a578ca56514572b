"""The GitHub Action (``action.yml``): lint and compat in one step, for a pull request or a push.

``action.yml`` runs ``python -m linter.cli.action`` with its inputs in ``INPUT_PATHS``,
``INPUT_AGAINST``, ``INPUT_RELEASED``, ``INPUT_FAIL_ON``, ``INPUT_CONFIG``, ``INPUT_SARIF_FILE`` and
``INPUT_LINT_SCOPE``, in the
checkout (the working directory). The run's context comes from what every runner sets:
``GITHUB_EVENT_NAME``/``GITHUB_EVENT_PATH`` (the base to compare against), ``GITHUB_STEP_SUMMARY``
(the Markdown job summary) and ``GITHUB_OUTPUT`` (the step's outputs).

What it prints: one workflow command per finding (``::error file=...,line=...,col=...``), so
findings appear inline on the pull request's diff, then the text reports in collapsed groups.
With ``lint-scope: changed`` (the default) and a base, lint findings are those of the spec files changed
since the base (as reviewdog and buf report): the rest of the tree is a count in the summary, so a
reviewer sees what the change touches, and only that (with compat) decides the exit code.
Exit codes as the CLI's: 0, 1 when a finding reaches the fail level, 2 for a usage error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from linter.cli.action_conformance import run_conformance_mode
from linter.cli.common import (
    CliError,
    append_to,
    emit,
    finish_output,
    guard_stdio,
    refuse_overlap,
)
from linter.cli.lint_fix import printable_diff
from linter.compat.api import compare_result
from linter.compat.changelog import Changelog, changelog
from linter.compat.releases import resolve_released
from linter.compat.report import compat_ruleset, to_report
from linter.compat.sources import (
    against,
    changed_specs,
    check_ref,
    first_line,
    run_git,
)
from linter.compat.suggest import Suggestion, suggest
from linter.engine.config import Config, load_config
from linter.engine.findings import Finding, Report
from linter.engine.fixes import unified_diff
from linter.engine.runner import lint, select_rules
from linter.errors import KrpcLintError
from linter.escape import longest_run, markdown_code, markdown_text, printable
from linter.report.formats import (
    escape_data,
    render_github,
    render_sarif,
    render_text,
    rule_label,
    step_outputs,
    summary_line,
    without_commands,
)
from linter.vocabulary import SEVERITIES, Category, plural

NO_COMMIT = "0" * 40
MAX_TABLE_ROWS = 300
MAX_CHANGELOG_CHARS = 200_000  # the job summary is capped at 1 MiB per step
LINT_SCOPES = ("changed", "all")
MODES = ("lint", "conformance")  # lint and compat of the change (the default), or a vendor's copy against upstream


class ActionError(KrpcLintError):
    """A problem with the inputs or the checkout: printed as an ``::error::`` and exit 2."""


@dataclass(frozen=True)
class Inputs:
    """The action's inputs; empty strings mean "not given", as GitHub passes them."""

    paths: tuple[str, ...] = ()
    against: str = ""
    released: tuple[str, ...] = ()  # as compat's --released: empty is auto where the checkout has release tags
    fail_on: str = ""
    config: str = ""
    sarif_file: str = ""
    lint_scope: str = "changed"
    allow_breaking_label: str = ""  # a pull-request label that lets released wire breaks pass (still reported)
    comment: bool = False  # post or update one pull-request comment with the summary
    github_token: str = ""  # for the comment

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Inputs:
        fail_on = env.get("INPUT_FAIL_ON", "").strip()
        if fail_on and fail_on not in SEVERITIES:
            raise ActionError(f"fail-on must be one of {', '.join(SEVERITIES)}, not {fail_on!r}")
        scope = env.get("INPUT_LINT_SCOPE", "").strip() or "changed"
        if scope not in LINT_SCOPES:
            raise ActionError(f"lint-scope must be one of {', '.join(LINT_SCOPES)}, not {scope!r}")
        return cls(paths=tuple(env.get("INPUT_PATHS", "").split()), against=env.get("INPUT_AGAINST", "").strip(),
                   released=tuple(env.get("INPUT_RELEASED", "").split()),
                   fail_on=fail_on, config=env.get("INPUT_CONFIG", "").strip(),
                   sarif_file=env.get("INPUT_SARIF_FILE", "").strip(), lint_scope=scope,
                   allow_breaking_label=env.get("INPUT_ALLOW_BREAKING_LABEL", "").strip(),
                   comment=_flag(env.get("INPUT_COMMENT", ""), "comment"),
                   github_token=env.get("INPUT_GITHUB_TOKEN", "").strip())


def event_payload(env: Mapping[str, str]) -> Any:
    """The event's payload as the runner wrote it (``None`` without an event file); ``OSError`` or ``ValueError``
    when the file cannot be read as JSON. The one reader of the event: the base, the labels, the comment's target."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def pull_request_of(env: Mapping[str, str]) -> dict[str, Any]:
    """The event's pull request; empty for other events, or for an event file that cannot be read (``base_of_event``
    says why where a base is needed)."""
    try:
        event = event_payload(env)
    except (OSError, ValueError):
        return {}
    found = event.get("pull_request") if isinstance(event, dict) else None
    return found if isinstance(found, dict) else {}


def base_of_event(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(commit, why) to compare against: the pull request's base, a merge group's base, a push's parent.

    Other events (a schedule, a manual run) have no base: give ``against`` for those.
    """
    name = env.get("GITHUB_EVENT_NAME", "")
    try:
        event = event_payload(env)
        if event is None:
            return None
        if name in ("pull_request", "pull_request_target"):
            return str(event["pull_request"]["base"]["sha"]), "the pull request's base"
        if name == "merge_group":
            return str(event["merge_group"]["base_sha"]), "the merge group's base"
        before = event.get("before")
        if name == "push" and isinstance(before, str) and before and before != NO_COMMIT:
            return before, "the commit before the push"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ActionError(f"cannot find the base commit in the {name or 'event'} event at "
                          f"{env.get('GITHUB_EVENT_PATH')} ({exc!r}); set the `against` input") from None
    return None


def _flag(value: str, name: str) -> bool:
    value = value.strip().lower()
    if value not in ("", "true", "false"):
        raise ActionError(f"{name} must be true or false, not {value!r}")
    return value == "true"


def labels_of_event(env: Mapping[str, str]) -> set[str]:
    """The labels of the event's pull request (none for other events, or an event file that says none)."""
    labels = pull_request_of(env).get("labels")
    if not isinstance(labels, list):
        return set()
    return {str(label["name"]) for label in labels if isinstance(label, dict) and "name" in label}


def ensure_commit(ref: str) -> None:
    """Fetch ``ref`` when a shallow checkout (actions/checkout's default depth 1) lacks it."""
    check_ref(ref)
    if run_git(".", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode == 0:
        return
    fetched = run_git(".", "fetch", "--quiet", "--no-tags", "--depth=1", "origin", ref)
    if fetched.returncode != 0:
        reason = first_line(fetched.stderr) or "no origin"
        raise ActionError(f"cannot find or fetch {ref} to compare against ({reason}); "
                          "check out with `fetch-depth: 0` in actions/checkout, or set `against`")


@dataclass
class Outcome:
    """What one run found: the two reports, the changelog of the change and the base it was against."""

    lint: Report
    compat: Report | None
    changelog: Changelog | None
    base: str
    why: str
    config: Config
    released: str = ""  # where the knowledge of what shipped came from (releases.Released.source)
    elsewhere: int | None = None  # lint findings in files the change does not touch; None: every file is shown
    suggestions: tuple[Suggestion, ...] = ()  # compat --suggest: the edits that keep the released bytes
    allowed_by: str = ""  # the pull-request label that let released wire breaks pass

    @property
    def fail_on(self) -> str:
        return self.config.fail_on

    @property
    def findings(self) -> list[Finding]:
        return sorted(self.lint.findings + (self.compat.findings if self.compat else []))

    def in_workspace(self) -> list[Finding]:
        """The findings with paths in the checkout: a file deleted since the base is ``BASE:path``
        in the text report, plain ``path`` for GitHub (annotations and SARIF locations)."""
        prefix = f"{self.base}:"
        return [replace(f, path=f.path.removeprefix(prefix).removeprefix("./")) if self.base and
                f.path.startswith(prefix) else f for f in self.findings]

    def failed(self) -> bool:
        return self.lint.failed(self.fail_on) or any(finding.at_least(self.fail_on) for finding in self.failing_compat())

    def failing_compat(self) -> list[Finding]:
        """Compat's findings that can fail the run: a label the pull request carries lets wire breaks pass."""
        return [f for f in (self.compat.findings if self.compat else []) if not self._let_pass(f)]

    def allowed(self) -> list[Finding]:
        """The wire breaks the pull request's label let pass (reported all the same)."""
        return [f for f in (self.compat.findings if self.compat else []) if self._let_pass(f)]

    def _let_pass(self, finding: Finding) -> bool:
        return bool(self.allowed_by) and finding.category == Category.WIRE_BREAKING.value


def check(inputs: Inputs, env: Mapping[str, str]) -> Outcome:
    """Lint the paths, and compare them with the base when there is one."""
    config = _config(inputs)
    paths = list(inputs.paths) or ["."]  # linter.parse.discovery tells the specs from other JSON
    if inputs.sarif_file:
        try:
            refuse_overlap(inputs.sarif_file, [*paths, config.source, config.baseline], "a checked path")
        except CliError as exc:
            raise ActionError(f"sarif-file {exc}") from None
    lint_report = lint(paths, config)
    base, why = (inputs.against, "the `against` input") if inputs.against else (base_of_event(env) or ("", ""))
    if not base:
        return Outcome(lint_report, None, None, "", "", config)  # nothing to tell changed files by: lint all
    ensure_commit(base)
    elsewhere = None
    if inputs.lint_scope == "changed":
        lint_report, elsewhere = changed_only(lint_report, base, paths, config)
    old, new = against(base, paths)
    old, new = replace(old, label=_short(base)), replace(new, label="this change")
    released = resolve_released(inputs.released, ".")
    result = compare_result(old, new, released=released.revisions)
    label = inputs.allow_breaking_label
    allowed_by = label if label and label in labels_of_event(env) else ""
    return Outcome(lint_report, to_report(result, config), changelog(old, new, result), base, why, config,
                   released.source, elsewhere, tuple(suggest(result)), allowed_by)


def changed_only(report: Report, base: str, paths: Sequence[str], config: Config) -> tuple[Report, int]:
    """The whole tree's report cut to the spec files changed since ``base``, and how many findings were cut.

    Cut from a lint of every file, so the directories stay complete: a request added without its response
    is still found, on the request."""
    specs = {os.path.realpath(file) for file in changed_specs(base, paths, config, "lint-scope: changed")}
    shown = [finding for finding in report.findings if os.path.realpath(finding.path) in specs]
    return Report(shown, files=len(specs)), len(report.findings) - len(shown)


def elsewhere_line(count: int) -> str:
    """The summary's line about the findings ``lint-scope: changed`` leaves out."""
    if not count:
        return "No lint findings in files this change does not touch."
    return (f"{plural(count, 'more lint finding')} in files this change does not touch "
            "(lint-scope: all shows them).")


def _config(inputs: Inputs) -> Config:
    config = load_config(inputs.config or None)
    return config.with_overrides(fail_on=inputs.fail_on or None)


def _short(ref: str) -> str:
    return ref[:12] if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref) else ref


# --- output ----------------------------------------------------------------------------------


def log(outcome: Outcome) -> str:
    """Annotations first (GitHub reads them anywhere in the log), then each report in a group. The annotations
    are the only commands: every piece of the input in them is escaped as GitHub's runner unescapes it, and the
    text reports (escaped too) are printed inside ``::stop-commands::`` with a random token."""
    parts = [render_github(Report(outcome.in_workspace()))]
    lint_text = render_text(outcome.lint)
    if outcome.elsewhere is not None:
        lint_text += elsewhere_line(outcome.elsewhere) + "\n"
    parts += ["::group::krpc-lint lint\n", without_commands(lint_text), "::endgroup::\n"]
    if outcome.compat is None:
        parts.append("::notice title=krpc-lint::no base commit to compare against (not a pull request or push); "
                     "set the `against` input to run compat\n")
    else:
        compat_text = render_text(outcome.compat) + f"released versions known from: {printable(outcome.released)}\n"
        parts += [f"::group::krpc-lint compat against {escape_data(outcome.base)}\n", without_commands(compat_text),
                  "::endgroup::\n"]
    return "".join(parts)


def job_summary(outcome: Outcome) -> str:
    """The Markdown job summary: the verdict, a findings table, and the protocol changelog of the change."""
    findings = outcome.findings
    verdict = "❌ Fails" if outcome.failed() else "✅ Passes"
    lines = ["## krpc-lint", "", f"{verdict} at `{outcome.fail_on}`.", ""]
    allowed = outcome.allowed()
    if allowed:
        lines += [f"{plural(len(allowed), 'wire break')} allowed by the pull request's label "
                  f"{markdown_code(outcome.allowed_by)}: reported below, not failing.", ""]
    lines.append(_lint_line(outcome))
    if outcome.elsewhere is not None:
        lines.append(f"- {elsewhere_line(outcome.elsewhere)}")
    if outcome.compat is None:
        lines.append("- **compat**: not run, no base commit to compare against (set the `against` input).")
    else:
        lines.append(f"- **compat** with {markdown_code(_short(outcome.base))} ({outcome.why}): "
                     f"{summary_line(outcome.compat)}")
        lines.append(f"- **released versions** known from: {markdown_text(outcome.released)}")
    lines.append("")
    if findings:
        lines += ["| Severity | Location | Rule | Message |", "| --- | --- | --- | --- |"]
        lines += [f"| {f.severity} | {markdown_code(f'{f.path}:{f.line}:{f.col}')} | {markdown_text(rule_label(f))} | "
                  f"{markdown_text(f.message)} |" for f in findings[:MAX_TABLE_ROWS]]
        if len(findings) > MAX_TABLE_ROWS:
            lines.append(f"\n… and {len(findings) - MAX_TABLE_ROWS} more: see the step's log or the SARIF file.")
        lines.append("")
    if outcome.suggestions:
        lines += ["### Suggested fix of the released wire breaks", "", _suggestions_section(outcome.suggestions)]
    if outcome.changelog is not None:
        lines += ["### Protocol changelog of this change", ""]
        lines.append(_changelog_section(outcome.changelog) if outcome.changelog.entries
                     else "No API or record changed.\n")
    return "\n".join(lines) + "\n"


def _suggestions_section(suggestions: Sequence[Suggestion]) -> str:
    """``compat --suggest`` for the summary: each edit as a diff (folded), each change it cannot carry explained."""
    parts = ["Keep the released versions' bytes and make the change in a new version "
             "(`krpc-lint compat --against BASE --fix` writes this):", ""]
    for suggestion in suggestions:
        if suggestion.fixable:
            diff = printable_diff(unified_diff(suggestion.file, suggestion.text, suggestion.fixed))
            fence = "`" * max(3, longest_run(diff, "`") + 1)
            parts.append(f"<details><summary>{_html(suggestion.file)}: {_html(suggestion.message)}</summary>\n\n"
                         f"{fence}diff\n{diff}{fence}\n\n</details>\n")
        for why in suggestion.blocked:
            parts.append(f"- {markdown_code(suggestion.file)} {markdown_text(suggestion.message)}: no new version can "
                         f"carry this change: {markdown_text(why)}")
    return "\n".join(parts) + "\n"


def _lint_line(outcome: Outcome) -> str:
    scope = "" if outcome.elsewhere is None else f" of the files changed since {markdown_code(_short(outcome.base))}"
    return f"- **lint**{scope}: {summary_line(outcome.lint)}"


def _html(text: str) -> str:
    """Text from the input inside an HTML block of the summary (``<summary>``): one line, inert HTML."""
    from html import escape

    return escape(printable(text))


def _changelog_section(log: Changelog) -> str:
    """The changelog, its headings two levels down, folded away when long."""
    body = "\n".join(f"##{line}" if line.startswith("#") else line for line in log.to_markdown().splitlines())
    if len(body) > MAX_CHANGELOG_CHARS:
        body = body[:MAX_CHANGELOG_CHARS].rsplit("\n", 1)[0] + "\n\n… (cut: run `krpc-lint changelog` for all of it)"
    count = len(log.entries)
    what = "1 API or record changed" if count == 1 else f"{count} APIs and records changed"
    return f"<details><summary>{what}</summary>\n\n{body}\n\n</details>\n"


def sarif(outcome: Outcome) -> str:
    """One SARIF run with the lint and compat findings, for code scanning."""
    config = outcome.config
    rules = {**select_rules(config).effective(), **compat_ruleset(config)[0].effective("compat")}
    return render_sarif(Report(outcome.in_workspace()), rules)


def outputs(outcome: Outcome, inputs: Inputs) -> str:
    """The step's outputs (``$GITHUB_OUTPUT``): a value that is not one line cannot add a key."""
    counts = Report(outcome.findings).summary
    return step_outputs({"findings": counts["findings"], "errors": counts["errors"], "warnings": counts["warnings"],
                         "sarif-file": inputs.sarif_file, "failed": str(outcome.failed()).lower()})


def run(env: Mapping[str, str]) -> int:
    """The whole action; returns the exit code."""
    mode = env.get("INPUT_MODE", "").strip() or "lint"
    if mode not in MODES:
        message = f"mode must be one of {', '.join(MODES)}, not {mode!r}"
        sys.stdout.write(f"::error title=krpc-lint::{escape_data(message)}\n")
        return 2
    if mode == "conformance":
        return run_conformance_mode(env)
    try:
        inputs = Inputs.from_env(env)
        outcome = check(inputs, env)
    except KrpcLintError as exc:  # the config, the inputs, a git ref: one line, exit 2
        sys.stdout.write(f"::error title=krpc-lint::{escape_data(str(exc))}\n")
        return 2
    sys.stdout.write(log(outcome))
    allowed = outcome.allowed()
    if allowed:
        sys.stdout.write(f"::notice title=krpc-lint::{len(allowed)} wire break(s) allowed by the pull "
                         f"request's label {escape_data(outcome.allowed_by)}\n")
    summary = job_summary(outcome)
    if inputs.comment:
        sys.stdout.write(_comment(env, inputs, summary))
    try:
        append_to(env.get("GITHUB_STEP_SUMMARY"), summary)
        append_to(env.get("GITHUB_OUTPUT"), outputs(outcome, inputs))
        if inputs.sarif_file:
            Path(inputs.sarif_file).parent.mkdir(parents=True, exist_ok=True)
            emit(sarif(outcome), inputs.sarif_file)
    except OSError as exc:
        sys.stdout.write(f"::error title=krpc-lint::cannot write {escape_data(str(exc.filename))}: {exc.strerror}\n")
        return 2
    except CliError as exc:
        sys.stdout.write(f"::error title=krpc-lint::{escape_data(str(exc))}\n")
        return 2
    return 1 if outcome.failed() else 0


def _comment(env: Mapping[str, str], inputs: Inputs, summary: str) -> str:
    """The log line of ``comment: true``: what was posted, or a warning why not (never the check's verdict)."""
    from linter.cli.action_comment import CommentError, post_summary

    if not inputs.github_token:
        return "::warning title=krpc-lint::comment: true needs github-token (e.g. ${{ github.token }})\n"
    try:
        number = pull_request_of(env).get("number")
        return f"krpc-lint: {post_summary(env, inputs.github_token, summary, number if type(number) is int else None)}\n"
    except CommentError as exc:
        return f"::warning title=krpc-lint::cannot comment on the pull request: {escape_data(str(exc))}\n"


if __name__ == "__main__":
    guard_stdio()  # the step log on a full disk or closed: one line and exit 2, as every command
    sys.exit(finish_output(run(os.environ)))
