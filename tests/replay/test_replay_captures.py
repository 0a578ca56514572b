"""``replay CAPTURE``: a packet capture is replayed as any corpus (its frames cut with the OLD specs, the ones the
traffic speaks), small ones in this process, the same outcomes on Spark (issue 27, points 2 and 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, require_shared, require_spark

from linter.codec import Codec
from linter.frames.extract import Extraction

CAPTURE = REPO_ROOT / "fixtures" / "captures" / "kafkajs.pcap"


def _replay(tmp_path: Path, *extra: str) -> tuple[dict[str, object], str]:
    old, new = require_shared("kafka-specs", "4.3"), require_shared("kafka-specs", "trunk-2024-10")
    out = tmp_path / ("out" + "".join(extra).replace("[", "").replace("]", ""))
    result = subprocess.run([sys.executable, "-m", "linter.cli.main", "replay", str(CAPTURE), "--specs", str(old),
                             "--against", str(new), "--out", str(out), *extra], capture_output=True, text=True,
                            cwd=REPO_ROOT, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "summary.json").read_text(encoding="utf-8")), result.stderr


def test_a_capture_is_replayed_in_this_process_and_on_spark_alike(tmp_path: Path) -> None:
    """kafkajs against librdkafka's mock cluster: every frame replays the same under both revisions but the mock's
    malformed LeaveGroup v3 response, which both fail to decode."""
    frames = sum(1 for _ in Extraction([str(CAPTURE)], Codec.load(require_shared("kafka-specs", "4.3"))).rows())
    here, stderr = _replay(tmp_path)
    assert here["master"] == "in-process" and here["frames"] == frames
    assert here["outcomes"] == {"same": frames - 1, "differs": 0, "old_fails": 0, "new_fails": 0, "both_fail": 1}
    assert "krpc-lint: 1 capture, " in stderr
    require_spark()
    there, _ = _replay(tmp_path, "--master", "local[1]")
    assert there["outcomes"] == here["outcomes"] and there["master"] == "local[1]"


def test_the_replay_command_finds_the_captures_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where to replay is decided once a run: the command's choice of Spark or this process, then the replay, read
    the captures of FRAMES (every file's first packet, for a directory) once, not once each."""
    from click.testing import CliRunner

    from linter.cli.main import cli
    from linter.frames import extract, on_spark

    calls: list[str] = []

    def counted(frames_path: str | Path) -> list[str]:
        calls.append(str(frames_path))
        return extract.captures_at(frames_path)

    monkeypatch.setattr(on_spark, "captures_at", counted)
    old, new = require_shared("kafka-specs", "4.3"), require_shared("kafka-specs", "trunk-2024-10")
    result = CliRunner().invoke(cli, ["replay", str(CAPTURE), "--specs", str(old), "--against", str(new),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "in this process" in result.stdout and calls == [str(CAPTURE)]
