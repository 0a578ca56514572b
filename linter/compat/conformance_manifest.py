"""The vendor's manifest for ``krpc-lint conformance --manifest``: what it intends for each upstream API.

A YAML or JSON mapping (optionally under a ``conformance:`` key) from an API's name (``Produce``; ``ProduceRequest``
and ``ProduceResponse`` name it too) to ``supported``, ``passthrough`` or ``unsupported`` (every version), or to
a mapping of those words to version ranges (``{supported: "3-12", unsupported: "0-2"}``). An upstream API the
manifest does not name, or an upstream version none of its ranges covers, is ``unclassified``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linter.compat.conformance import Conformance, Unclassified
from linter.compat.revision import Revision
from linter.errors import KrpcLintError
from linter.model.versions import ALL, Versions, VersionsError
from linter.parse.files import InputError, read_regular
from linter.parse.yamlfile import load_yaml

INTENTS = ("supported", "passthrough", "unsupported")
MANIFEST_BYTES = 1 << 20


class ManifestError(KrpcLintError, ValueError):
    """A manifest that cannot be read or says something that cannot be meant."""


@dataclass(frozen=True)
class Manifest:
    """API name (without ``Request``/``Response``) -> intent -> the versions it covers."""

    source: str
    intents: dict[str, dict[str, Versions]]

    def covered(self, name: str) -> list[Versions] | None:
        """The ranges the manifest classifies for API ``name``; ``None`` when it does not name it."""
        found = self.intents.get(api_name(name))
        return None if found is None else list(found.values())


def api_name(name: str) -> str:
    """``ProduceRequest`` / ``ProduceResponse`` / ``Produce`` -> ``Produce``."""
    for suffix in ("Request", "Response"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def read_manifest(path: str) -> Manifest:
    """The manifest at ``path`` (``ManifestError`` says what is wrong with it)."""
    try:
        text = read_regular(path, MANIFEST_BYTES).decode("utf-8")
    except (InputError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read the manifest: {exc}") from None
    if len(text) > MANIFEST_BYTES:
        raise ManifestError(f"{path}: the manifest is larger than {MANIFEST_BYTES} bytes")
    # only when a manifest is read: ruamel costs a cold start
    from ruamel.yaml.error import YAMLError

    try:
        data = load_yaml(text)
    except (YAMLError, ValueError) as exc:
        raise ManifestError(f"{path}: invalid YAML or JSON: {' '.join(str(exc).split())[:300]}") from None
    return parse_manifest(data, path)


def parse_manifest(data: Any, source: str = "manifest") -> Manifest:
    if isinstance(data, dict) and set(data) == {"conformance"}:
        data = data["conformance"]
    if not isinstance(data, dict):
        raise ManifestError(f"{source}: expected a mapping of API names to {' | '.join(INTENTS)}")
    intents: dict[str, dict[str, Versions]] = {}
    for key, value in data.items():
        name = api_name(str(key))
        if name in intents:
            raise ManifestError(f"{source}: API {name} is classified twice")
        intents[name] = _intent(source, name, value)
    return Manifest(source, intents)


def _intent(source: str, name: str, value: Any) -> dict[str, Versions]:
    if isinstance(value, str) and value in INTENTS:
        return {value: ALL}
    if not isinstance(value, dict) or not value or any(k not in INTENTS for k in value):
        raise ManifestError(f"{source}: {name}: expected {' | '.join(INTENTS)}, or a mapping of them to version "
                            f"ranges such as {{supported: \"3-12\"}}, not {value!r}"[:300])
    out = {}
    for intent, versions in value.items():
        if versions is True:
            out[intent] = ALL
            continue
        try:
            parsed = Versions.parse(str(versions)) if isinstance(versions, (str, int)) else None
        except VersionsError as exc:
            raise ManifestError(f"{source}: {name}: {intent}: {exc}") from None
        if parsed is None:
            raise ManifestError(f"{source}: {name}: {intent}: expected a version range such as \"0-12\" or \"3+\"")
        out[intent] = parsed
    return out


def classify(result: Conformance, upstream: Revision, vendor: Revision, manifest: Manifest) -> list[Unclassified]:
    """The upstream APIs (requests, by apiKey) and versions the manifest leaves unclassified; it must name
    only APIs one side has. Sets ``result.unclassified`` and returns it."""
    known = {api_name(m.name or "") for side in (upstream, vendor) for m in side.messages.values()
             if m.type in ("request", "response")}
    unknown = sorted(set(manifest.intents) - known)
    if unknown:
        raise ManifestError(f"{manifest.source}: neither side has the API(s) {', '.join(unknown)}")
    vendor_names = {m.api_key: m.name or "" for m in vendor.messages.values() if m.type == "request"}
    found = []
    for message in sorted(upstream.messages.values(), key=lambda m: (m.api_key or 0, m.name or "")):
        if message.type != "request" or message.api_key is None or message.versions is None or message.removed:
            continue
        name = api_name(message.name or "")
        ranges = manifest.covered(name) or manifest.covered(vendor_names.get(message.api_key, name))
        if ranges is None:
            found.append(Unclassified(name, message.api_key, tuple(reversed(list(message.versions))),
                                      f"not in {manifest.source}"))
            continue
        left = tuple(v for v in reversed(list(message.versions)) if not any(r.contains(v) for r in ranges))
        if left:
            found.append(Unclassified(name, message.api_key, left,
                                      f"upstream versions outside what {manifest.source} classifies"))
    result.unclassified = found
    return found
