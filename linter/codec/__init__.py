"""Schema-driven reference encoder/decoder for Kafka messages, byte-exact with Kafka.

>>> from linter.codec import Codec
>>> codec = Codec.load("fixtures/valid")
>>> codec.encode("WidgetFetchRequest", 0, codec.default("WidgetFetchRequest", 0)).hex()[:8]  # replicaId -1
'ffffffff'
"""

from linter.codec.codec import Codec
from linter.codec.errors import CodecError, DecodeError, EncodeError, SpecError
from linter.codec.tagged import UNKNOWN_TAGS

__all__ = ["UNKNOWN_TAGS", "Codec", "CodecError", "DecodeError", "EncodeError", "SpecError"]
