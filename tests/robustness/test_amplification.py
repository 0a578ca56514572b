"""Output and memory in proportion to the input (issue 25, class 5): each reproducer runs as a user runs
krpc-lint (a fresh process per run, ``test_hostile.run_bounded``: its own peak RSS as the kernel counts it)
at two sizes, n and 4n, and on a tiny input for the interpreter's own share. Growth is judged as a ratio:
what the run adds over the tiny one grows about 4 times from n to 4n when it is linear and 16 times when it
is quadratic; the tests allow 6. Output is also bounded per finding. There is no wall-clock limit.

The reproducers: removing thousands of fields (each finding's witness carried the whole message: 148 MB of
JSON for 2,000 fields), hundreds of thousands of repeated keys (855 MB, 573 MB when nested 190 deep),
arrays of elements that take no bytes nested in another array (10 KB of hex built a million elements) and
arrays of a million empty flexible structs, and ``size --values`` over many lines (all held in memory).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_hostile import Outcome, run_bounded

from linter.codec.wire import uvarint_bytes

LINEAR = 6.0  # growth from n to 4n above the tiny run: 4 when linear, 16 when quadratic
FLOOR_MB = 4.0  # below this much growth, memory is noise (the allocator, the page cache), not the input


def _grows_linearly(tiny: float, small: float, large: float, what: str) -> None:
    """``large`` (at 4n) adds at most ``LINEAR`` times what ``small`` (at n) adds over ``tiny``."""
    added_small, added_large = max(small - tiny, FLOOR_MB), large - tiny
    assert added_large <= LINEAR * added_small, \
        f"{what}: {tiny:.0f} / {small:.0f} / {large:.0f} MB at 0 / n / 4n: grows {added_large / added_small:.1f}x"


def _clean(outcome: Outcome) -> None:
    text = outcome.stdout + outcome.stderr
    assert outcome.code in (0, 1, 2), text[-2000:]
    assert "internal error" not in text and "Traceback" not in text, text[-2000:]


# --- compat witnesses ------------------------------------------------------------------------------------


def _removed_fields(tmp_path: Path, count: int) -> tuple[Path, Path, int]:
    """A message of ``count`` int32 fields, and the same with none: ``count`` wire breaks at v0 sharing one
    witness of ``4 * count`` bytes. Returns both directories and the old spec's size."""
    fields = [{"name": f"F{i}", "type": "int32", "versions": "0+"} for i in range(count)]
    spec = {"name": "Big", "type": "data", "validVersions": "0", "flexibleVersions": "0+"}
    size = 0
    for side, kept in (("old", fields), ("new", [])):
        directory = tmp_path / f"{side}{count}"
        directory.mkdir()
        text = json.dumps({**spec, "fields": kept})
        (directory / "Big.json").write_text(text)
        size = max(size, len(text))
    return tmp_path / f"old{count}", tmp_path / f"new{count}", size


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_removing_fields_writes_a_bounded_witness_per_finding(tmp_path: Path, fmt: str) -> None:
    """2,000 removed fields wrote 148 MB of JSON (each witness the whole message's hex and values): the
    witness now shows 64 bytes either side of where the revisions part and 32 decoded members."""
    runs = {}
    for count in (10, 500, 2000):
        old, new, size = _removed_fields(tmp_path, count)
        outcome = run_bounded("compat", str(old), str(new), "--format", fmt)
        _clean(outcome)
        assert outcome.code == 1
        runs[count] = (outcome, size)
    (tiny, _), (small, small_in), (large, large_in) = runs[10], runs[500], runs[2000]
    findings = {count: outcome.stdout.count("KL1002") for count, (outcome, _) in runs.items()}
    assert findings[500] >= 499 and findings[2000] >= 1999, findings
    for count in (500, 2000):
        out = len(runs[count][0].stdout.encode())
        assert out <= 6_000 * findings[count], f"{fmt}: {out} bytes for {findings[count]} findings"
    out_small, out_large = len(small.stdout.encode()), len(large.stdout.encode())
    assert out_large / large_in <= 1.5 * out_small / small_in, (out_small, small_in, out_large, large_in)
    _grows_linearly(tiny.megabytes, small.megabytes, large.megabytes, f"compat --format {fmt}")


def test_a_long_witness_is_an_excerpt_around_where_the_revisions_part(tmp_path: Path) -> None:
    old, new, _ = _removed_fields(tmp_path, 2000)
    outcome = run_bounded("compat", str(old), str(new), "--format", "json")
    witness = json.loads(outcome.stdout)["findings"][0]["witness"]
    assert witness["length"] == 8001 and witness["offset"] < 8001
    assert "bytes …" in witness["hex"] and len(witness["hex"]) <= 2 * (2 * 64 + 1) * 2 + 60
    assert witness["decoded_old"]["…"] == "1968 more fields" and len(witness["decoded_old"]) == 33


# --- lint: repeated keys ------------------------------------------------------------------------------------


def _repeated_keys(path: Path, count: int, depth: int) -> int:
    head = ('{"apiKey": 1, "type": "request", "name": "DupRequest", "validVersions": "0", '
            '"flexibleVersions": "none", "fields": [], ')
    text = head + '"a": {' * depth + ", ".join(['"x": 1'] * count) + "}" * depth + "}"
    path.write_text(text)
    return len(text)


@pytest.mark.parametrize("depth", [0, 190])
def test_repeated_keys_cost_what_the_file_costs(tmp_path: Path, depth: int) -> None:
    """300,000 repeated keys wrote 108 MB of JSON at 854 MB (573 MB when 190 deep, a path per repeat): the
    first 100 are findings, one more counts the rest, and paths are built for those only."""
    runs = {}
    for count in (10, 50_000, 200_000):
        path = tmp_path / f"DupRequest{count}.json"
        size = _repeated_keys(path, count, depth)
        outcome = run_bounded("lint", str(path), "--format", "json")
        _clean(outcome)
        runs[count] = (outcome, size)
    for count in (50_000, 200_000):
        outcome, size = runs[count]
        found = json.loads(outcome.stdout)["findings"]
        repeats = [f for f in found if f["rule"] == "KL005"]
        assert len(repeats) == 101 and f"{count - 1 - 100} more repeated keys" in repeats[-1]["message"]
        assert len(outcome.stdout) < 100_000, f"{len(outcome.stdout)} bytes of output for {size} of input"
    _grows_linearly(runs[10][0].megabytes, runs[50_000][0].megabytes, runs[200_000][0].megabytes,
                    f"lint of repeated keys {depth} deep")


# --- codec decode ------------------------------------------------------------------------------------


NO_BYTES = {"type": "data", "name": "ZeroData", "validVersions": "0", "flexibleVersions": "none", "fields": [
    {"name": "Outer", "type": "[]Elem", "versions": "0+", "about": "Outer.", "fields": [
        {"name": "Inner", "type": "[]Zero", "versions": "0+", "about": "Inner.", "fields": [
            {"name": "Nothing", "type": "Sub", "versions": "0+", "about": "Nothing.", "fields": []}]}]},
    {"name": "Pad", "type": "bytes", "versions": "0+", "about": "Padding."}]}
EMPTY_FLEXIBLE = {"type": "data", "name": "EmptyData", "validVersions": "0", "flexibleVersions": "0+", "fields": [
    {"name": "Items", "type": "[]Item", "versions": "0+", "about": "Empty items.", "fields": []}]}


def _nested_no_bytes(count: int) -> bytes:
    """``count`` outer elements each claiming ``count`` inner elements of no bytes, then ``count`` bytes of
    padding so that each claim passes Kafka's check (no more elements than bytes remaining)."""
    length = count.to_bytes(4, "big")
    return length + length * count + length + bytes(count)


def _empty_structs(count: int) -> bytes:
    return uvarint_bytes(count + 1) + bytes(count) + b"\x00"  # each element its empty tagged section


def _decode(tmp_path: Path, spec: dict, data: bytes, label: str) -> tuple[Outcome, int]:
    specs = tmp_path / f"specs-{spec['name']}"
    specs.mkdir(exist_ok=True)
    (specs / f"{spec['name']}.json").write_text(json.dumps(spec))
    given = tmp_path / f"{label}.hex"
    given.write_text(data.hex())
    outcome = run_bounded("codec", "decode", "--specs", str(specs), spec["name"], "0", "--hex", "-i", str(given))
    _clean(outcome)
    return outcome, len(data) * 2


@pytest.mark.parametrize("pure", [False, True], ids=["accelerated", "pure-python"])
def test_elements_without_bytes_are_capped_per_input_byte(tmp_path: Path, pure: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 x 1,000 elements from 10 KB of hex built a million dicts (547 MB): elements that take no bytes
    count against one allowance for the whole input (4 values per byte + 65,536); past it, a DecodeError at
    the array's byte and path."""
    if pure:
        monkeypatch.setenv("KRPC_LINT_PURE_PYTHON", "1")
    runs = {count: _decode(tmp_path, NO_BYTES, _nested_no_bytes(count), f"nested{count}")[0]
            for count in (2, 1000, 4000)}
    assert runs[2].code == 0 and json.loads(runs[2].stdout)["outer"] == [{"inner": [{"nothing": {}}] * 2}] * 2
    for count in (1000, 4000):
        outcome = runs[count]
        assert outcome.code == 1 and "Outer[" in outcome.stderr and "the input does not hold" in outcome.stderr, \
            outcome.stderr
        assert outcome.stdout == ""
    _grows_linearly(runs[2].megabytes, runs[1000].megabytes, runs[4000].megabytes, "codec decode, no-byte elements")


def test_elements_without_bytes_within_the_allowance_decode() -> None:
    from linter.codec import Codec, DecodeError
    from linter.model.spec import build_message

    codec = Codec([build_message(NO_BYTES, "ZeroData.json")])
    with pytest.raises(DecodeError, match="the input does not hold"):
        codec.decode("ZeroData", 0, _nested_no_bytes(200))  # 40,000 elements of 2 values: 80,000 > 4 * 1,008 + 65,536
    data = _nested_no_bytes(150)  # 22,500 elements: 45,000 values <= 4 * 758 + 65,536
    value = codec.decode("ZeroData", 0, data)
    assert len(value["outer"]) == 150 and all(len(item["inner"]) == 150 for item in value["outer"])
    assert codec.decode("ZeroData", 0, data) == value  # the same bytes again: a fresh allowance


def _wide(tags: int) -> dict:
    fields = [{"name": f"T{i}", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": i, "about": "t."}
              for i in range(tags)]
    return {"type": "data", "name": "TagData", "validVersions": "0", "flexibleVersions": "0+",
            "fields": [{"name": "Items", "type": "[]Item", "versions": "0+", "about": "Items.", "fields": fields}]}


def test_defaults_of_absent_tagged_fields_are_capped_per_input_byte(tmp_path: Path) -> None:
    """An element of one byte (an empty tagged section) whose struct has 1,000 tagged fields gets 1,000
    defaults: 20 KB of hex built 287 MB, 80 KB a GB. Such wide elements count against the allowance; an
    element of Kafka's specs holds at most 18 values, and 50 wide elements are still read."""
    spec = _wide(1000)
    runs = {count: _decode(tmp_path, spec, _empty_structs(count), f"wide{count}")[0] for count in (50, 10_000, 40_000)}
    assert runs[50].code == 0 and json.loads(runs[50].stdout)["items"] == [{}] * 50
    for count in (10_000, 40_000):
        assert runs[count].code == 1 and "Items: array of" in runs[count].stderr, runs[count].stderr
    _grows_linearly(runs[50].megabytes, runs[10_000].megabytes, runs[40_000].megabytes, "codec decode, wide elements")


def test_a_million_empty_structs_cost_in_proportion(tmp_path: Path) -> None:
    """A flexible empty struct takes one byte (its tagged section): an array of them is read, at a cost that
    grows with the input, and the JSON output is at most 3 bytes per byte of hex."""
    runs = {count: _decode(tmp_path, EMPTY_FLEXIBLE, _empty_structs(count), f"empty{count}")
            for count in (10, 250_000, 1_000_000)}
    for count in (250_000, 1_000_000):
        outcome, size = runs[count]
        assert outcome.code == 0 and outcome.stdout.count("{}") == count
        assert len(outcome.stdout) <= 3 * size
    _grows_linearly(runs[10][0].megabytes, runs[250_000][0].megabytes, runs[1_000_000][0].megabytes,
                    "codec decode of empty structs")


# --- size --values -------------------------------------------------------------------------------------


@pytest.mark.parametrize("what_if", [[], ["--kip636"]], ids=["plain", "kip636"])
def test_size_values_streams(tmp_path: Path, what_if: list[str]) -> None:
    """``size --values`` held every line's value (a million lines: 547 MB); now it measures each as it is read:
    the same figures, and memory that does not follow the number of lines."""
    from conftest import require_shared

    specs = require_shared("kafka-specs", "trunk-2024-10")
    line = json.dumps({"clientSoftwareName": "a", "clientSoftwareVersion": "b"}) + "\n"
    runs: dict[int, Outcome] = {}
    for count in (10, 50_000, 200_000):
        values = tmp_path / f"values{count}.jsonl"
        values.write_text(line * count)
        runs[count] = run_bounded("size", str(specs), "ApiVersionsRequest", "--version", "3", "--values", str(values),
                                  "--format", "json", *what_if)
        _clean(runs[count])
        total = json.loads(runs[count].stdout)["total"]
        assert (total["count"], total["bytes"]) == (count, 5 * count)
        assert not what_if or total["what_if"]["bytes"] == 5 * count
    grown = runs[200_000].megabytes - runs[50_000].megabytes
    assert grown < FLOOR_MB, f"150,000 more lines took {grown:.0f} MB more"


@pytest.mark.parametrize(("lines", "error"), [
    (b'{"clientSoftwareName": "a", "clientSoftwareVersion": "b"}\r{"clientSoftwareName": 5}\n', ":2: "),
    (b"\n\n", "no values"),
    (b'{"clientSoftwareName": "a", "clientSoftwareVersion": "b"}\n{\n', ":2: not JSON"),
])
def test_size_values_errors_name_their_line(tmp_path: Path, lines: bytes, error: str) -> None:
    from conftest import require_shared

    specs = require_shared("kafka-specs", "trunk-2024-10")
    values = tmp_path / "values.jsonl"
    values.write_bytes(lines)
    outcome = run_bounded("size", str(specs), "ApiVersionsRequest", "--version", "3", "--values", str(values))
    _clean(outcome)
    assert outcome.code == 2 and error in outcome.stderr and outcome.stderr.count("\n") == 1, outcome.stderr



@pytest.mark.parametrize("size", [1, 511, 512, 513, 1_000, 70_000])
def test_an_excerpt_still_tells_the_messages_size(size: int) -> None:
    """The audit's report shows a witness's size from its hex alone (its Parquet rows carry no length): the
    excerpt's digits and the runs it left out add up to the message, wherever it parts."""
    from linter.audit.html_wire import _byte_count
    from linter.compat.witness_excerpt import excerpt, excerpt_length

    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    for offset in (0, size // 3, size - 1, size):
        for also in (None, 0, size // 2):
            shown = excerpt(data, offset, also)
            assert excerpt_length(shown) == size, (offset, also, shown[:80])
    assert _byte_count(excerpt(data, size // 2)) == (f"{size} byte" if size == 1 else f"{size:,} bytes")


@pytest.mark.parametrize(("inner", "reported"), [
    ({"name": "Inner", "type": "Empty", "versions": "0+", "fields": [
        {"name": "Id", "type": "int32", "versions": "1+", "about": "x"}]}, True),  # v0: an empty struct only
    ({"name": "Inner", "type": "Empty", "versions": "0+", "nullableVersions": "0+", "fields": [
        {"name": "Id", "type": "int32", "versions": "1+", "about": "x"}]}, False),  # its null marker is a byte
    ({"name": "Count", "type": "int8", "versions": "0+", "about": "x"}, False),
])
def test_lint_reports_the_arrays_whose_elements_the_codec_counts_as_taking_no_bytes(
        tmp_path: Path, inner: dict, reported: bool) -> None:
    """KL655 follows struct fields down as the codec does: an element made only of empty structs in a version
    that is not flexible takes no bytes (the codec's allowance counts it; Kafka's readers refuse the array)."""
    from linter import Config, lint

    spec = {"name": "MarkData", "type": "data", "validVersions": "0-2", "flexibleVersions": "2+", "fields": [
        {"name": "Marks", "type": "[]Mark", "versions": "0+", "about": "x", "fields": [inner]}]}
    (tmp_path / "MarkData.json").write_text(json.dumps(spec))
    findings = [f for f in lint([str(tmp_path)], Config(profile="strict")).findings if f.rule == "KL655"]
    assert bool(findings) is reported, findings
    if reported:
        assert "Mark has no field that takes bytes at version 0" in findings[0].message


def _doubling_chain(levels: int) -> dict:
    """An array of common struct S0, each Si holding two fields of S(i+1) (2^levels paths down to the int32 of
    the last); the two fields start at different versions, so nothing takes bytes at v0 below S1."""
    commons = [{"name": f"S{i}", "versions": "0+", "fields": [
        {"name": "A", "type": f"S{i + 1}", "versions": f"{i % 3}+", "about": "x"},
        {"name": "B", "type": f"S{i + 1}", "versions": f"{(i + 1) % 3}+", "about": "x"}]} for i in range(levels - 1)]
    commons.append({"name": f"S{levels - 1}", "versions": "0+", "fields": [
        {"name": "Leaf", "type": "int32", "versions": "0+", "about": "x"}]})
    return {"name": "ChainData", "type": "data", "validVersions": "0-5", "flexibleVersions": "none",
            "fields": [{"name": "Items", "type": "[]S0", "versions": "0+", "about": "x"},
                       {"name": "More", "type": "[]S1", "versions": "0+", "about": "x"}],
            "commonStructs": commons}


def test_a_chain_of_structs_each_holding_two_of_the_next_costs_in_proportion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KL655 kept each struct's byte versions as its fields' lists concatenated: a chain whose every struct holds
    two of the next doubled them per level (19 levels: 3.4 s; 64 are allowed). Each list is now a union of
    disjoint ranges, shared by every array of the file: the version ranges lint intersects (counted, not timed)
    grow with the chain, from 10 levels to 20 about twice (2^10 times before)."""
    from linter import Config, lint
    from linter.model.versions import Versions

    intersected = 0
    intersect = Versions.intersect

    def counted(self: Versions, other: Versions) -> Versions:
        nonlocal intersected
        intersected += 1
        return intersect(self, other)

    monkeypatch.setattr(Versions, "intersect", counted)
    counts = {}
    for levels in (10, 20):
        directory = tmp_path / f"chain{levels}"
        directory.mkdir()
        (directory / "ChainData.json").write_text(json.dumps(_doubling_chain(levels)))
        intersected = 0
        findings = [f for f in lint([str(directory)], Config(profile="strict")).findings if f.rule == "KL655"]
        counts[levels] = intersected
        assert [f.message.split(" has no")[0] for f in findings] == ["Items: S0", "More: S1"], findings
        assert all("at version 0," in f.message for f in findings), findings
    assert counts[20] <= 3 * counts[10], counts
