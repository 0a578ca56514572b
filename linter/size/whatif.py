"""The what-ifs of ``krpc-lint size``: which edited spec the same values are encoded with again.

A ``WhatIf`` says what to change (``--kip636``, ``--tag PATH``, ``--flexible``) and builds, per message
version, a codec holding that message edited so (``codec_for``, cached): the bytes saved are then counted
exactly, by encoding both ways, never estimated.

``--flexible`` edits ``flexibleVersions`` so that it covers the version (``made_flexible``): compact
strings, arrays and bytes, and a tagged-field section per struct (at least one byte each), as Kafka's
generator would encode that version if the spec said so. Fields with their own ``flexibleVersions``
(``"none"``: the request header's ClientId) keep it. A version that is flexible already is unchanged.

>>> from linter.codec import Codec
>>> codec = Codec.load("fixtures/valid")
>>> value = codec.default("WidgetFetchRequest", 0)
>>> edited = WhatIf(flexible=True).codec_for(codec, "WidgetFetchRequest", 0)
>>> len(codec.encode("WidgetFetchRequest", 0, value)), len(edited.encode("WidgetFetchRequest", 0, value))
(14, 11)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from linter.codec.codec import Codec
from linter.model.spec import MessageSpec, build_message
from linter.size.measure import kip636_paths, tag_fields


@dataclass(frozen=True)
class WhatIf:
    """The edits of a what-if; ``active`` when there is one at all."""

    kip636: bool = False  # every ErrorCode and ErrorMessage of every response tagged
    tags: tuple[str, ...] = ()  # these field paths tagged
    flexible: bool = False  # the version made flexible when it is not
    _codecs: dict[tuple[int, str, int], Codec | None] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def active(self) -> bool:
        return self.kip636 or bool(self.tags) or self.flexible

    def codec_for(self, codec: Codec, name: str, version: int) -> Codec | None:
        """A codec of the message edited as this what-if says, at ``version``; ``None`` when not ``active``
        (built once per codec, message and version)."""
        if not self.active:
            return None
        key = (id(codec), name, version)
        if key not in self._codecs:
            self._codecs[key] = Codec([self.edited(codec.spec(name), version)])
        return self._codecs[key]

    def edited(self, message: MessageSpec, version: int) -> MessageSpec:
        """The message as the what-if would have it at ``version``: made flexible first, then tagged (so
        ``--flexible --kip636`` tags the error codes of a version that was not flexible)."""
        if self.flexible and not message.flexible.contains(version):
            message = made_flexible(message, version)
        paths = list(kip636_paths(message)) if self.kip636 else []
        paths += [path for path in self.tags if path not in paths]
        return tag_fields(message, paths, null_error_messages=self.kip636) if paths else message


def made_flexible(message: MessageSpec, version: int) -> MessageSpec:
    """The message with ``flexibleVersions`` starting at ``version`` (or at its own start, when lower)."""
    raw = copy.deepcopy(message.raw)
    start = version if message.flexible.empty else min(version, message.flexible.lowest)
    raw["flexibleVersions"] = f"{start}+"
    return build_message(raw, message.path)


__all__ = ["WhatIf", "made_flexible"]
