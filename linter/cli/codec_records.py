"""``krpc-lint codec record encode|decode``: coordinator records as their log stores them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from linter.cli.codec_io import (
    BadInput,
    data_errors,
    dumps,
    in_part,
    input_option,
    load,
    name_of,
    parse_hex,
    parse_json,
    pretty_option,
    read_input,
    specs_option,
)

if TYPE_CHECKING:
    from linter.codec import Codec
    from linter.codec.codec import CoordinatorRecord
    from linter.model.spec import MessageSpec


@click.group("record")
def record_group() -> None:
    """Coordinator records (Kafka 4.1+ coordinator-key / coordinator-value specs) as their log stores
    them: key = int16 record type + the key at version 0; value = int16 version + the value, or none
    (a tombstone). The JSON is {"recordType": N, "key": {...}, "valueVersion": V, "value": {...} or null}.
    """


@record_group.command("encode")
@specs_option
@input_option
def record_encode_command(specs: str, input_file: str | None) -> None:
    """Encode a record's JSON: two lines of hex, the key and the value ("null" for a tombstone)."""
    codec = load(specs)
    with data_errors():
        key_bytes, value_bytes = _encode(codec, parse_json(read_input(input_file)))
    click.echo(key_bytes.hex())
    click.echo("null" if value_bytes is None else value_bytes.hex())


def _encode(codec: Codec, record: Any) -> tuple[bytes, bytes | None]:
    """The key and value bytes of a record's JSON (``None``: a tombstone); ``valueVersion`` defaults to the
    value spec's highest version."""
    if not isinstance(record, dict) or type(record.get("recordType")) is not int or "key" not in record:
        raise BadInput('a record is a JSON object {"recordType": N, "key": {...}, "valueVersion": V, "value": ...}')
    api_key, value, version = record["recordType"], record.get("value"), record.get("valueVersion")
    key_name = name_of(_record_spec(codec, "coordinator-key", api_key))
    key = in_part("key", codec.from_json, key_name, 0, record["key"])
    if value is not None:
        value_spec = _record_spec(codec, "coordinator-value", api_key)
        versions = value_spec.versions
        if version is None and versions is not None:
            version = versions.highest
        if versions is None or type(version) is not int or not versions.contains(version):
            raise BadInput(f"valueVersion {version!r}: {value_spec.name} has versions {versions}")
        value = in_part("value", codec.from_json, name_of(value_spec), version, value)
    key_bytes = in_part("key", codec.encode_record, api_key, key, None)[0]
    value_bytes = None if value is None else in_part("value", codec.encode_record, api_key, key, value, version)[1]
    return key_bytes, value_bytes


@record_group.command("decode")
@specs_option
@click.argument("key_hex", metavar="KEY")
@click.argument("value_hex", metavar="[VALUE]", required=False)
@pretty_option
def record_decode_command(specs: str, key_hex: str, value_hex: str | None, pretty: bool) -> None:
    """Decode a record from the hex of its KEY and VALUE (no VALUE, or "null": a tombstone)."""
    codec = load(specs)
    with data_errors():
        key = parse_hex(key_hex, "KEY")
        value = None if value_hex is None or value_hex == "null" else parse_hex(value_hex, "VALUE")
        record = codec.decode_record(key, value)
    click.echo(dumps(_record_json(codec, record), pretty))


def _record_json(codec: Codec, record: CoordinatorRecord) -> dict[str, Any]:
    """A decoded record as JSON: the key and value with the names and versions of their specs."""
    key, value = codec.to_json(record.key_name, 0, record.key), None
    if record.value is not None and record.value_name is not None and record.value_version is not None:
        value = codec.to_json(record.value_name, record.value_version, record.value)
    return {"recordType": record.api_key, "keyName": record.key_name, "key": key, "valueName": record.value_name,
            "valueVersion": record.value_version, "value": value}


def _record_spec(codec: Codec, kind: str, api_key: int) -> MessageSpec:
    try:
        return codec.key_for(api_key) if kind == "coordinator-key" else codec.value_for(api_key)
    except KeyError as exc:
        raise BadInput(f"recordType {api_key}: {exc.args[0]}") from None
