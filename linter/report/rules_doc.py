"""Generate ``docs/rules.md`` from the rule pack itself (``python -m linter.report.rules_doc``).

The document is never edited by hand: a test regenerates it and fails when it is stale.
"""

from __future__ import annotations

from collections import defaultdict

from linter.engine.rules import Example, Rule
from linter.engine.runner import all_rules
from linter.vocabulary import CATEGORY_HEADINGS

_CATEGORY_TITLES = {
    "syntax": "Syntax", "structure": "Structure", "versions": "Versions", "fields": "Fields and types",
    "tagged-fields": "Tagged fields (KIP-482)", "defaults": "Defaults", "structs": "Structs",
    "messages": "Messages and cross-file", "kafka-tests": "Kafka's unit tests (profile kafka-ci)", "style": "Style",
    "meta": "Suppressions",
    **CATEGORY_HEADINGS,  # compat rules (``krpc-lint compat``): one category per verdict of the comparison
    # wire rules (``krpc-lint frames check``): what Kafka does with the bytes
    "frames-refused": "Frames: what Kafka refuses or misreads",
    "frames-not-canonical": "Frames: what Kafka accepts but never writes",
    "frames-unknown": "Frames: what the specs do not know",
}
_ONE_SIDED = {"old.json": "new.json: none (the file is removed)", "new.json": "old.json: none (the file is new)"}


def _profiles(rule: Rule) -> str:
    return ", ".join(rule.profiles)


def _code(text: str) -> list[str]:
    return ["```json", text.rstrip(), "```"]


def _compat_example(example: Example) -> list[str]:
    """A pair of revisions: each file under its name (old.json, new.json, old/<path>, new/<path>)."""
    lines = []
    if len(example.files) == 1 and next(iter(example.files)) == "new.json":
        lines += [_ONE_SIDED["new.json"], ""]
    for index, (name, text) in enumerate(example.texts.items()):
        lines += ([""] if index else []) + [f"{name}:", ""] + _code(text)
    if len(example.files) == 1 and next(iter(example.files)) == "old.json":
        lines += ["", _ONE_SIDED["old.json"]]
    return lines


def _example_block(rule: Rule, kind: str) -> list[str]:
    lines = []
    examples = [e for e in rule.examples if e.kind == kind]
    if not examples:
        return ["(no example: see above)"]
    for index, example in enumerate(examples):
        if rule.scope == "compat":
            lines += ([""] if index else []) + _compat_example(example)
            continue
        for name, text in example.texts.items():
            label = f"{name}: " if len(example.files) > 1 else ""
            lines += [f"{label}", *_code(text)] if label else _code(text)
    return lines


def _fixes_section(rules: list[Rule]) -> list[str]:
    """How ``lint --fix``/``--diff`` work, what they promise, and the fixable rules: the YAMLs decide the list."""
    fixable = [rule for rule in rules if rule.fixable]
    out = [
        "## Fixes",
        "",
        "`krpc-lint lint --fix PATHS` applies the fixes of the fixable rules' findings to the files the run lints "
        "(named, or found in a directory given; never a sibling read only as context), one atomic write per file "
        "(the file's mode kept), then reports what remains. `krpc-lint lint --diff PATHS` prints the unified diff "
        "`--fix` would apply, writes nothing, and exits 1 when there is one. The JSON output gives each fixable "
        "finding its edits (`fix`: start, end, old and new text; [json-output.md](json-output.md)).",
        "",
        "What a fix promises:",
        "",
        "- **Never a change to the wire.** A rule is fixable only when its remedy is unique and keeps the bytes of "
        "every version: the codec's layout and default-message bytes are the same before and after "
        "(`tests/engine/test_fix_fixtures.py` checks it on every fixable rule's fixture and examples). The one exception "
        "is KIP-482's draft syntax (KL412), which Kafka's generator always refused, so no version has bytes to "
        "keep. A remedy that needs a decision (which version range, which tag, a new field or a removal) is a "
        "finding without a fix.",
        "- **Edits at positions.** Each edit replaces the characters between two offsets the parser recorded; "
        "comments, layout, line ends and every other byte stay as they were: the file is never rewritten whole. "
        "A fix that would delete a comment, or touch a file with a duplicate key, is not offered.",
        "- **Idempotent.** A fix removes its finding, so on a file with nothing left to fix `--fix` changes "
        "nothing. When two fixes edit the same text, the first by position is applied and the other waits for "
        "the next run; an edit whose text changed since the file was linted is left out.",
        "- **Partial where the rest is a choice.** Where only part of a finding has one remedy, only that part "
        "carries a fix and the rest stays reported (KL412's `optionalFields`; KL257 when the field is tagged "
        "outside its versions; KL803 when the value binds to nothing).",
        "",
        f"The fixable rules ({len(fixable)}):",
        "",
        "| id | name | what the fix does |",
        "| --- | --- | --- |",
    ]
    return out + [f"| [{rule.id}](#{rule.id.lower()}-{rule.name}) | `{rule.name}` | {rule.fix_note} |"
                  for rule in fixable]


def render_rules_markdown(rules: list[Rule] | None = None) -> str:
    rules = rules if rules is not None else all_rules()  # in id order: KL1001 after KL901
    out = [
        "# Rules",
        "",
        "<!-- Generated by `python -m linter.report.rules_doc` from rules/*.yaml. Do not edit. -->",
        "",
        "Profiles: `kafka` is exactly the set of checks Kafka's message generator enforces (which release's: "
        "`--kafka-version`, default any supported release, see [kafka-versions.md](kafka-versions.md)); "
        "`kafka-ci` adds what Kafka's unit tests assert over every spec that the spec files decide (the rules of the "
        "category `kafka-tests`, [kafka-tests.md](kafka-tests.md)); "
        "`recommended` (the default) adds checks Kafka misses; `strict` adds style. "
        "`krpc-lint rules explain ID` prints any rule with its examples.",
        "",
        "Rules KL3001 and up (and KL258) are lint rules from Kafka's unit tests (category `kafka-tests`): a spec "
        "Kafka's generator accepts can still fail Kafka's build, because tests such as `ApiMessageTypeTest` loop "
        "over every API. They are errors, in `kafka-ci`, `recommended` and `strict`; a rule Kafka dropped holds "
        "only with `--kafka-version` up to its last release.",
        "",
        "Rules KL1001 and up are used by `krpc-lint compat OLD NEW`, never by `krpc-lint lint`: each names one kind "
        "of change between two revisions of the specs, and its category is the compatibility verdict. For them "
        "`kafka` reports what can break peers or stored data, `recommended` adds source-only changes and `strict` "
        "also lists safe ones. Their examples are pairs: `old.json` before and `new.json` after the change.",
        "",
        "Rules KL2001 and up are used by `krpc-lint frames check INPUTS --specs SPECS`, never by `lint`: each names "
        "one way the bytes of a captured frame differ from what Kafka's reader takes or its writer writes "
        "([wire-check.md](wire-check.md)). `kafka` reports what Kafka refuses or misreads, `recommended` adds what "
        "it accepts but never writes and what the specs lack. Their examples are an API's request and response "
        "specs and frames as `frames extract` writes them (JSON Lines, `hex` the whole frame), read with Kafka's "
        "RequestHeader and ResponseHeader.",
        "",
        "Every rule is stable unless its entry gives another status (`status:` in its YAML, as in ruff and buf): "
        "a `preview` rule runs only when `select` names it by id or name, or with `preview = true` in the config; "
        "a `deprecated` one still runs, and naming it warns; a `removed` one never runs, and naming it is a usage "
        "error. The last two name the rule that replaces them.",
        "",
        "A rule with one deterministic remedy that keeps every version's bytes says `fixable: true` in its YAML; "
        "[Fixes](#fixes) says how `krpc-lint lint --fix` and `--diff` apply them and lists those rules.",
        "",
        *_fixes_section(rules),
        "",
        "## All rules",
        "",
        "| id | name | severity | profiles | title |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in rules:
        out.append(f"| [{rule.id}](#{rule.id.lower()}-{rule.name}) | `{rule.name}` | {rule.severity} | "
                   f"{_profiles(rule)} | {rule.listed_title} |")
    by_category: dict[str, list[Rule]] = defaultdict(list)
    for rule in rules:
        by_category[rule.category].append(rule)
    for category, members in by_category.items():
        out += ["", f"## {_CATEGORY_TITLES.get(category, category)}"]
        for rule in members:
            out += ["", f"### {rule.id} {rule.name}", "", f"**{rule.title}** — {rule.severity}; profiles: {_profiles(rule)}.",
                    "", rule.rationale]
            if rule.status != "stable":
                out += ["", f"Status: {rule.status_text}."]
            if rule.hint:
                out += ["", f"Fix: {rule.hint}"]
            if rule.fixable:
                out += ["", f"Fixable: {rule.fix_note or 'the fix is applied in place.'} `krpc-lint lint --fix` "
                        "applies it (comments and layout kept); `--diff` shows it."]
            if rule.releases_text:
                out += ["", f"{rule.releases_text}; its examples are checked with "
                        f"`--kafka-version {rule.example_release}`."]
            if rule.references:
                out += ["", "References: " + "; ".join(rule.references) + "."]
            out += ["", "Flagged:", ""] + _example_block(rule, "bad")
            out += ["", "Accepted:", ""] + _example_block(rule, "good")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render_rules_markdown(), end="")
