"""docs/editors.md followed in a real editor: Neovim, headless, with its built-in LSP client and the doc's own
snippet as the whole config, shows KL301 on a renamed field of a copy of Kafka's specs, and hovers the field."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_shared, unavailable

pytest.importorskip("pygls", reason="the language server needs pygls (the test extras install it)")

DOC = Path(__file__).resolve().parents[2] / "docs" / "editors.md"

# Waits for diagnostics, prints them as file:line:col: code message, hovers the renamed field and quits.
REPORT = """\
local function out(text) io.stdout:write(text .. "\\n") end
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 100)
if not ok then out("no diagnostics") end
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?"
  out(string.format("%s:%d:%d: %s %s", vim.fn.expand("%:t"), d.lnum + 1, d.col + 1, code, d.message))
end
local line = vim.fn.search("Max_WaitMs")
local params = { textDocument = vim.lsp.util.make_text_document_params(),
                 position = { line = line - 1, character = vim.fn.col(".") + 2 } }
local answers = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 20000) or {}
for _, answer in pairs(answers) do
  if answer.result then out("hover: " .. answer.result.contents.value:gsub("\\n", " | ")) end
end
vim.cmd("qa!")
"""


def neovim() -> tuple[str, tuple[int, int]]:
    found = shutil.which("nvim")
    if found is None:
        unavailable("Neovim (nvim) is not installed (.ci/run installs Debian's neovim)")
        raise AssertionError("unreachable")
    head = subprocess.run([found, "--version"], check=True, capture_output=True, text=True, timeout=60).stdout
    version = re.match(r"NVIM v(\d+)\.(\d+)", head)
    assert version, head
    return found, (int(version[1]), int(version[2]))


def doc_snippet(version: tuple[int, int]) -> str:
    """The Lua block docs/editors.md gives for this Neovim: ``vim.lsp.config`` from 0.11, else ``start_client``."""
    blocks = re.findall(r"```lua\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    (modern,) = [block for block in blocks if "vim.lsp.config" in block]
    (older,) = [block for block in blocks if "vim.lsp.start_client" in block]
    return modern if version >= (0, 11) else older


def test_neovim_following_the_docs_shows_diagnostics_and_hover(tmp_path: Path) -> None:
    nvim, version = neovim()
    source = require_shared("kafka-specs", "trunk-2024-10", "clients", "src", "main", "resources", "common", "message")
    messages = tmp_path / "message"
    shutil.copytree(source, messages)
    fetch = messages / "FetchRequest.json"
    good = fetch.read_text(encoding="utf-8")
    fetch.write_text(good.replace('"name": "MaxWaitMs"', '"name": "Max_WaitMs"', 1), encoding="utf-8")
    line = good[:good.index('"name": "MaxWaitMs"')].count("\n") + 1
    (tmp_path / "init.lua").write_text(doc_snippet(version), encoding="utf-8")
    (tmp_path / "report.lua").write_text(REPORT, encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run([nvim, "--headless", "-u", "init.lua", str(fetch), "-c", "luafile report.lua"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False)
    shown = done.stdout.splitlines()
    assert f"FetchRequest.json:{line}:15: KL301 invalid field name \"Max_WaitMs\": use a letter followed by " \
           "letters and digits" in shown, done
    (hover,) = [text for text in shown if text.startswith("hover: ")]
    assert "**Max_WaitMs**: `int32`" in hover and "v0-17: int32 (4 bytes)" in hover, hover


def test_the_vscode_extension_declares_what_it_reads() -> None:
    """editors/vscode: every setting extension.js reads is declared (with its default) in package.json, the
    extension wakes for JSON, and docs/editors.md names the package vsce makes."""
    root = DOC.parents[1] / "editors" / "vscode"
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    code = (root / "extension.js").read_text(encoding="utf-8")
    read = dict(re.findall(r'settings\.get\("(\w+)", (.+?)\)', code))
    declared = manifest["contributes"]["configuration"]["properties"]
    assert read and {f"krpcLint.{name}" for name in read} == set(declared), (read, declared)
    for name, default in read.items():
        assert json.loads(default) == declared[f"krpcLint.{name}"]["default"], name
    assert "onLanguage:json" in manifest["activationEvents"]
    assert f"{manifest['name']}-{manifest['version']}.vsix" in DOC.read_text(encoding="utf-8")
