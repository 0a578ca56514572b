"""The generated docs stay in step with the code."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from linter.report.rules_doc import render_rules_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_rules_md_is_generated_from_rules():
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules_markdown(), "docs/rules.md is stale: run `make docs`"


def test_every_rule_is_documented_once():
    text = render_rules_markdown()
    from linter.engine.runner import all_rules

    for rule in all_rules():
        assert text.count(f"### {rule.id} {rule.name}") == 1


def test_generated_schema_validator_matches_the_schema():
    from linter.model import _spec_validator
    from linter.model.schema import schema_digest

    assert _spec_validator.SCHEMA_SHA256 == schema_digest(), "run `python -m linter.model.schema`"


def _yaml_blocks(markdown: str) -> list:
    from ruamel.yaml import YAML

    blocks = re.findall(r"```yaml\n(.*?)```", markdown, re.DOTALL)
    return [YAML(typ="safe").load(block) for block in blocks]


def test_example_workflow_uses_only_what_the_action_offers():
    from ruamel.yaml import YAML

    action = YAML(typ="safe").load(ROOT / "action.yml")
    (workflow,) = _yaml_blocks((ROOT / "docs" / "github-action.md").read_text(encoding="utf-8"))
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if step.get("uses", "").split("@")[0].endswith("/krpc-lint")]
    assert len(ours) == 1
    assert set(ours[0]["with"]) <= set(action["inputs"])
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == ours[0]["with"]["sarif-file"]
    used_outputs = re.findall(rf"steps\.{re.escape(ours[0]['id'])}\.outputs\.([\w-]+)", str(upload))
    assert used_outputs and set(used_outputs) <= set(action["outputs"])


def test_readme_pre_commit_example_uses_the_hooks_of_this_repo():
    from ruamel.yaml import YAML

    hooks = {hook["id"] for hook in YAML(typ="safe").load(ROOT / ".pre-commit-hooks.yaml")}
    configs = [block for block in _yaml_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
               if isinstance(block, dict) and "repos" in block]
    assert configs, "README.md has no .pre-commit-config.yaml example"
    used = {hook["id"] for config in configs for repo in config["repos"] for hook in repo["hooks"]}
    assert used == hooks


def test_readme_sample_output_is_what_the_commands_print():
    """The sample at the top of README.md: each ``$ krpc-lint ...`` line, run here, prints what follows it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"```\n(\$ krpc-lint .*?)```", readme, re.DOTALL)[1]
    runs = re.findall(r"^\$ (krpc-lint [^\n]*)\n(.*?)(?=^\$ |\Z)", sample, re.DOTALL | re.MULTILINE)
    assert len(runs) == 2
    for command, expected in runs:
        result = subprocess.run([sys.executable, "-m", "linter.cli.main", *shlex.split(command)[1:]], cwd=ROOT,
                                capture_output=True, check=False, text=True, env={**os.environ, "NO_COLOR": "1"})
        assert result.stdout == expected, f"README sample of `{command}` is stale"
