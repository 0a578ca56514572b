"""A revision of the specs: file texts by relative path, and the messages they define.

Revisions come from a file, a directory, or a git tree (``linter.compat.sources``); the
comparison never touches the file system itself, so every source is treated alike. Replay and
``size --frames`` ship one to their Spark workers, which build its codec from the bytes
(``Codec.from_files``) and know it by its ``digest``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from linter.engine.context import FileContext
from linter.model.spec import MessageSpec
from linter.parse.document import read_document


@dataclass(frozen=True)
class Revision:
    """Spec files of one side of a comparison.

    ``label`` names the revision for people (``3.7.0``, ``origin/trunk``); ``files`` maps a
    path relative to the revision's root (POSIX separators) to the file's bytes; ``prefix``
    is prepended to that relative path in findings (a directory, or ``REF:dir/``).
    """

    label: str
    files: dict[str, bytes] = field(hash=False)
    prefix: str = ""
    others: dict[str, bytes] = field(default_factory=dict, hash=False)  # walked JSON that is not a spec

    def aligned_with(self, other: Revision) -> Revision:
        """This revision, also reading as specs the files that ``other`` has as specs at the same path (a
        spec broken beyond recognition on one side is still that spec, and reported as unreadable)."""
        moved = {rel: data for rel, data in self.others.items() if rel in other.files}
        if not moved:
            return self
        rest = {rel: data for rel, data in self.others.items() if rel not in moved}
        return Revision(self.label, dict(sorted({**self.files, **moved}.items())), self.prefix, rest)

    def display(self, relative: str) -> str:
        return f"{self.prefix}{relative}"

    @cached_property
    def digest(self) -> str:
        """A SHA-256 of the spec files' paths and bytes: the same specs have the same digest wherever they
        were read (a Spark worker's cache of codecs is keyed by it).

        >>> Revision("a", {"A.json": b"{}"}).digest == Revision("b", {"A.json": b"{}"}, "x/").digest
        True
        """
        digest = hashlib.sha256()
        for name, data in self.files.items():
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
        return digest.hexdigest()

    @cached_property
    def contexts(self) -> dict[str, FileContext]:
        """Each file parsed (never raises: unreadable files keep their problem)."""
        return {rel: FileContext(read_document(self.display(rel), data)) for rel, data in sorted(self.files.items())}

    @cached_property
    def messages(self) -> dict[str, MessageSpec]:
        """The message of every readable spec file, by relative path."""
        found = {}
        for rel, ctx in self.contexts.items():
            message = ctx.message
            if message is not None and message.name:
                found[rel] = message
        return found

    def unreadable(self) -> dict[str, str]:
        """Files with no usable JSON object, with why (for a clear finding instead of silence)."""
        out = {}
        for rel, ctx in self.contexts.items():
            problem = ctx.document.problem
            if problem is not None:
                out[rel] = problem.message
            elif ctx.message is None:
                out[rel] = "the file is not a JSON object"
        return out


def parsed_once(revision: Revision, cache: dict[bytes, MessageSpec | None], limit: int = 20_000) -> Revision:
    """``revision`` with its messages parsed through ``cache`` (file bytes -> message): revisions that share
    files (releases of one repository) parse each distinct file once. The cache is emptied past ``limit``."""
    messages = {}
    for rel, data in revision.files.items():
        if data not in cache:
            if len(cache) >= limit:
                cache.clear()
            cache[data] = FileContext(read_document(revision.display(rel), data)).message
        message = cache[data]
        if message is not None and message.name:
            messages[rel] = message
    revision.__dict__["messages"] = messages  # the cached_property, filled from the shared parse
    return revision
