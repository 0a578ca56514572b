"""Traffic-like random values for ``frames generate``, fast enough to draw one per frame.

``linter.codec.values.random_value`` aims at edge cases (a third of the integers are a type's
bounds, a fifth of the nullable fields are null, string characters are uniform over Unicode) and
walks the message shape on every call (~100 us a value). A synthetic corpus wants the opposite:
values that look like a cluster's traffic, and many of them. ``Traffic`` compiles each message's
``shape`` (the codec's public description of a valid value) once into closures, choosing a
distribution per field from its name and type:

- strings: topic names, client / group / member ids, hosts, racks, principals, config keys and
  so on come from seeded vocabularies (hot entries much more common than cold ones: Zipf-like);
  other strings mix alphabets (identifiers, printable ASCII, accented and CJK text, emoji) and
  lengths (mostly short, a few of 128+ characters, which need a two-byte length);
- integers: error codes and throttle times mostly 0, partitions and node ids small, offsets and
  timestamps large, timeouts from common settings; any other integer is mostly a small common
  value with a tail over its whole range. A field's distribution is used only when all it draws
  fits the field's type, else the generic one is;
- arrays: counts from a skewed (exponential) distribution whose mean is the frame's size class,
  smaller in nested arrays; bytes and records: sizes log-uniform, up to a few KB in big frames;
- nullable fields are sometimes null, tagged fields sometimes present (else their default).

Every value stays within what ``random_value`` may produce (type ranges, nulls only where
nullable, tagged fields present or default), so every frame encodes and decodes. Given the same
``random.Random`` state, the values are the same: vocabularies are drawn from it too.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from linter.codec.values import Array, Leaf, Shape, Slot, Struct, shape
from linter.parse.linear import linear

if TYPE_CHECKING:
    from linter.codec import Codec

Maker = Callable[[], Any]

NULL_CHANCE = 0.08  # a nullable field is null
QUIET_NULL_CHANCE = 0.85  # an error message or reason is null (when it may be): most responses succeed
TAGGED_CHANCE = 0.35  # a tagged field is present (else it keeps its default, which is not written)
ZERO_UUID_CHANCE = 0.05
LONG_CHANCE = 0.015  # a string, or an array of primitives, gets 128+ characters / elements
REUSE_DEPTH = 2  # struct elements this deep in arrays (or deeper) may be reused values (encoding only reads)
REUSE_CHANCE = 0.7
RING = 64  # reusable values kept per struct
SMALL_ELEMENTS, SMALL_BYTES = 4, 256  # only values this small are kept: a reused one must not blow the budgets
NESTED_SHRINK = 3.0  # each level of array nesting divides the mean count by this
ROUND_UP = 0.95  # added to an exponential count before rounding down: few arrays are empty
# The frame's size class and how often: (mean array count, array elements in all, largest bytes
# value as a power of two, bytes in all). The budgets keep nested arrays from multiplying into megabytes.
SIZE_CLASSES = (((0.7, 12, 5, 128), 0.55), ((1.3, 32, 7, 512), 0.25), ((2.5, 96, 8, 1536), 0.12),
                ((6.0, 300, 9, 4096), 0.06), ((15.0, 900, 11, 16384), 0.02))

_IDENT = "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789-_."
_ASCII = "".join(chr(code) for code in range(0x20, 0x7F))
_TEXT = ("éèüößçñøåĳœ€łžčšğıİαβγδλπωжщя"
         "אבשعربиदनकतしかの日本語中文字한국어 ·—…“”")
_ASTRAL = "😀🚀🎉📦🔥💡🧪𝔘𝕟𝖎𐐷𠜎"
# Byte -> character tables: random bytes translated through them give text over an alphabet fast.
_IDENT_TABLE = bytes((_IDENT * 4)[:256], "ascii")
_ASCII_TABLE = bytes((_ASCII * 3)[:256], "ascii")

_WORDS = ("orders", "payments", "clicks", "users", "events", "inventory", "audit", "metrics", "logs", "sessions",
          "shipments", "invoices", "alerts", "profiles", "search", "ads", "checkout", "fraud", "notifications",
          "telemetry", "billing", "ledger", "carts", "pricing", "reviews", "geo", "iot", "trades", "quotes", "cdc")
_ENVS = ("", "", "", "prod.", "staging.", "dev.", "analytics.", "team7.", "eu.", "us-east.")
_TAILS = ("", "", "", "-v2", ".changelog", "-dlq", ".raw", "-compacted", "-retry-3", ".avro", "-repartition")
_ROLES = ("producer", "consumer", "adminclient", "streams", "connect-worker", "rdkafka", "sarama", "librdkafka")
_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
_ERROR_CODES = (3, 6, 7, 14, 15, 16, 22, 25, 27, 29, 36, 41, 47, 58, 72, 74, 79, 89, 100)
_TIMEOUTS = (0, 100, 500, 1000, 3000, 5000, 10000, 30000, 45000, 60000, 120000, 300000, 2147483647)
_BYTE_LIMITS = (0, 1, 1024, 65536, 1048576, 52428800, 2147483647)
_MESSAGES = ("The coordinator is loading and hence can't process requests.", "This server does not host this "
             "topic-partition.", "The request timed out.", "Not authorized to access topics: [orders]",
             "The group member's supported protocols are incompatible with those of existing members.",
             "Leader not available", "Broker: Unknown member", "The specified member id is unknown.",
             "Topic 'payments' already exists.", "Invalid replication factor: 4, available brokers: 3")
_CONFIG_KEYS = ("cleanup.policy", "retention.ms", "retention.bytes", "segment.bytes", "min.insync.replicas",
                "compression.type", "max.message.bytes", "message.timestamp.type", "unclean.leader.election.enable",
                "log.retention.hours", "num.partitions", "default.replication.factor", "flush.ms",
                "leader.replication.throttled.replicas", "confluent.placement.constraints")
_CONFIG_VALUES = ("delete", "compact", "compact,delete", "604800000", "-1", "1073741824", "2", "snappy", "lz4",
                  "zstd", "producer", "CreateTime", "false", "true", "9223372036854775807", "")


class Traffic:
    """Value makers for the messages of one codec, drawing from one seeded RNG."""

    def __init__(self, codec: Codec, rng: random.Random) -> None:
        self.codec = codec
        self.rng = rng
        self.mean = 1.0  # the frame's mean array count (set_size)
        self.budget = 0  # array elements the frame may still add (set_size)
        self.bytes_budget = 0  # bytes of bytes and records values the frame may still add (set_size)
        self.bytes_power = 6.0  # the frame's largest bytes size, as a power of two (set_size)
        self.words = Vocabulary(rng)
        self._makers: dict[tuple[str, int], Maker] = {}
        self._classes = [size_class for size_class, _ in SIZE_CLASSES]
        self._cumulative = list(itertools.accumulate(weight for _, weight in SIZE_CLASSES))

    def value(self, name: str, version: int) -> dict[str, Any]:
        """A new value of the message at the version, at the current size class."""
        key = (name, version)
        make = self._makers.get(key)
        if make is None:
            make = self._makers[key] = self.struct(shape(self.codec, name, version), 0)
        value: dict[str, Any] = make()
        return value

    def set_size(self) -> None:
        """Draw the next frame's size class: most frames are small, a few are large."""
        at = bisect.bisect(self._cumulative, self.rng.random() * self._cumulative[-1])
        self.mean, self.budget, self.bytes_power, self.bytes_budget = self._classes[min(at, len(self._classes) - 1)]

    def client_id(self) -> str | None:
        return None if self.rng.random() < 0.03 else self.words.client()

    # --- compiling a shape into makers ------------------------------------------------------------

    def struct(self, node: Struct, depth: int) -> Maker:
        fresh = dict_maker([slot.key for slot in node.slots], [self.slot(slot, depth) for slot in node.slots])
        return fresh if depth < REUSE_DEPTH else self.reusing(fresh)

    def reusing(self, fresh: Maker) -> Maker:
        """``fresh``, or often a small value it made before: nested elements cost most of a value's
        time, and traffic repeats them (the same partition in many fetches)."""
        ring: list[Any] = []
        random_ = self.rng.random

        def make() -> Any:
            if ring and random_() < REUSE_CHANCE:
                return ring[int(random_() * len(ring))]
            elements, blobs = self.budget, self.bytes_budget
            value = fresh()
            if elements - self.budget <= SMALL_ELEMENTS and blobs - self.bytes_budget <= SMALL_BYTES:
                if len(ring) < RING:
                    ring.append(value)
                else:
                    ring[int(random_() * RING)] = value
            return value
        return make

    def slot(self, slot: Slot, depth: int) -> Maker:
        make = self.shape(slot.shape, slot.key, depth)
        if slot.nullable:
            make = _sometimes_null(make, self.rng.random, _null_chance(slot.key))
        if slot.default is not None:
            make = _sometimes_default(make, self.rng.random, slot.default)
        return make

    def shape(self, node: Shape, key: str, depth: int) -> Maker:
        if isinstance(node, Struct):
            return self.struct(node, depth)
        if isinstance(node, Array):
            return self.array(node, key, depth)
        return self.leaf(node, key)

    def array(self, node: Array, key: str, depth: int) -> Maker:
        element = self.shape(node.element, key, depth + 1)
        random_ = self.rng.random
        shrink = NESTED_SHRINK ** depth
        log = math.log
        long = isinstance(node.element, Leaf) and node.element.kind != "records"

        def make() -> list[Any]:
            count = int(-log(1.0 - random_()) * self.mean / shrink + ROUND_UP)
            if long and random_() < LONG_CHANCE:
                count = 128 + int(random_() * 200)
            count = min(count, self.budget)
            self.budget -= count
            return [element() for _ in range(count)]
        return make

    def leaf(self, node: Leaf, key: str) -> Maker:
        kind = node.kind
        if kind == "string":
            return self.words.string_maker(key)
        if kind in ("bytes", "records"):
            return self.blob_maker(key)
        if kind == "bool":
            random_ = self.rng.random
            return lambda: random_() < 0.3
        if kind == "uuid":
            return self.words.uuid_maker(key)
        if kind == "float64":
            return self.float_maker()
        return int_maker(self.rng, key, node.low, node.high)

    def blob_maker(self, key: str) -> Maker:
        """Sizes log-uniform up to 2**bytes_power, within the frame's budget (a few empty): records, tokens."""
        random_, randbytes = self.rng.random, self.rng.randbytes
        empty = 0.3 if key.lower() in ("userdata", "metadata", "assignment") else 0.08

        def make() -> bytes:
            if random_() < empty:
                return b""
            size = min(int(2.0 ** (random_() * self.bytes_power)), self.bytes_budget)
            self.bytes_budget -= size
            return randbytes(size)
        return make

    def float_maker(self) -> Maker:
        random_ = self.rng.random
        return lambda: round(random_() * 100.0, 3) if random_() < 0.8 else (random_() - 0.5) * 1e9


def dict_maker(keys: list[str], makers: list[Maker]) -> Maker:
    """``lambda: {keys[0]: makers[0](), ...}`` as a dict display: 2.5x faster than a comprehension over
    pairs, and building dicts is most of a value's time. The source names only ``k0``, ``m0``, ...:
    keys and makers are passed in, never written into the code."""
    count = len(keys)
    params = "".join(f"k{i}, m{i}, " for i in range(count))
    items = ", ".join(f"k{i}: m{i}()" for i in range(count))
    namespace: dict[str, Any] = {}
    exec(f"def factory({params}):\n    def make():\n        return {{{items}}}\n    return make\n", namespace)  # noqa: S102 - names only k0, m0...: no input text
    make: Maker = namespace["factory"](*(item for pair in zip(keys, makers) for item in pair))
    return make


def _null_chance(key: str) -> float:
    lowered = key.lower()
    return QUIET_NULL_CHANCE if "error" in lowered or lowered == "reason" else NULL_CHANCE


def _sometimes_null(make: Maker, random_: Callable[[], float], chance: float) -> Maker:
    return lambda: None if random_() < chance else make()


def _sometimes_default(make: Maker, random_: Callable[[], float], default: Maker) -> Maker:
    return lambda: make() if random_() < TAGGED_CHANCE else default()


# --- integers ---------------------------------------------------------------------------------------


def _choice(random_: Callable[[], float], values: Sequence[int]) -> Maker:
    count = len(values)
    return lambda: values[int(random_() * count)]


def _mostly(random_: Callable[[], float], common: int, chance: float, other: Maker) -> Maker:
    return lambda: common if random_() < chance else other()


def _small(random_: Callable[[], float], top: int, skew: float = 2.0, minus_one: float = 0.0) -> Maker:
    """0..top-1, low values commonest; -1 with the given chance (an unknown id or epoch)."""
    return lambda: -1 if random_() < minus_one else int(top * random_() ** skew)


def _log_uniform(random_: Callable[[], float], digits: float, base: int = 0, minus_one: float = 0.0) -> Maker:
    """``base`` plus a value of 0..10**digits, each order of magnitude about as likely."""
    return lambda: -1 if random_() < minus_one else base + int(10.0 ** (random_() * digits)) - 1


# (pattern over the lower-cased key, the smallest and largest value drawn, maker factory)
_INT_RULES: tuple[tuple[str, int, int, Callable[[Callable[[], float]], Maker]], ...] = (
    (r"errorcode$|^error$", 0, 100, lambda r: _mostly(r, 0, 0.93, _choice(r, _ERROR_CODES))),
    (r"throttletime", 0, 5000, lambda r: _mostly(r, 0, 0.9, _small(r, 5000))),
    (r"bytes$", 0, 2147483647, lambda r: _choice(r, _BYTE_LIMITS)),
    (r"^partition|partitionindex|partitionid|^index$|batchindex", 0, 255, lambda r: _small(r, 256, 2.5)),
    (r"offset|watermark|^position$|lag$|offsetsum", -1, 10**10, lambda r: _log_uniform(r, 10, minus_one=0.05)),
    (r"timestamp|appendtime|lastupdate|starttime", -1, 1_700_000_000_000 + 10**11,
     lambda r: _log_uniform(r, 11, 1_700_000_000_000, minus_one=0.05)),
    (r"producerid", -1, 10**7, lambda r: _log_uniform(r, 7, minus_one=0.1)),
    (r"epoch|generation", -1, 999, lambda r: _small(r, 1000, 3.0, minus_one=0.1)),
    (r"timeout|ms$|interval|lifetime|period", 0, 2147483647, lambda r: _choice(r, _TIMEOUTS)),
    (r"port$", 0, 65535, lambda r: _choice(r, (9092, 9093, 9094, 19092, 29092, 443))),
    (r"node|broker|leader|replica|isr|voter|controller|^id$|lastknownelr|eligible", -1, 63,
     lambda r: _small(r, 64, 2.0, minus_one=0.05)),
    (r"apikey|version|level", 0, 79, lambda r: _small(r, 80, 1.5)),
    (r"count|size|numpartitions|factor|iterations", -1, 9999, lambda r: _small(r, 10000, 4.0, minus_one=0.03)),
)


def int_maker(rng: random.Random, key: str, low: int, high: int) -> Maker:
    """The integer distribution of a field: its rule's if every value drawn fits the type, else generic."""
    random_, lowered = rng.random, key.lower()
    for pattern, smallest, largest, factory in _INT_RULES:
        if linear(pattern).search(lowered) and low <= smallest and largest <= high:
            return factory(random_)
    return _generic_int(rng, low, high)


def _generic_int(rng: random.Random, low: int, high: int) -> Maker:
    """Mostly small common values; then magnitudes over the whole range; a few bounds."""
    random_, randint = rng.random, rng.randint
    small = tuple(value for value in (0, 1, -1, 2, 3, 4, 5, 8, 10, 16, 100) if low <= value <= high)
    edges = (low, high)
    digits = math.log10(high + 1)

    def make() -> int:
        roll = random_()
        if roll < 0.45:
            return small[int(random_() * len(small))]
        if roll < 0.8:
            value = min(int(10.0 ** (random_() * digits)) - 1, high)
            return -value if low < 0 and random_() < 0.2 and -value >= low else value
        if roll < 0.85:
            return edges[random_() < 0.5]
        return randint(low, high)
    return make


# --- strings and UUIDs -----------------------------------------------------------------------------


class Vocabulary:
    """Seeded pools of the names a cluster's traffic repeats, and makers that draw from them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.random = rng.random
        self.topics = [self._topic() for _ in range(2000)] + ["__consumer_offsets", "__transaction_state"]
        self.clients = [self._client() for _ in range(600)]
        self.groups = [f"{rng.choice(_WORDS)}-{rng.choice(('service', 'app', 'sink', 'etl', 'indexer'))}-"
                       f"{self._number()}" for _ in range(800)]
        self.hosts = [f"broker-{n}.kafka.{rng.choice(_REGIONS)}.internal" for n in range(60)] + \
                     [f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}" for _ in range(200)]
        self.racks = [f"{region}{zone}" for region in _REGIONS for zone in "abc"]
        self.principals = [f"User:{rng.choice(_WORDS)}-{rng.choice(_ROLES)}" for _ in range(150)] + \
                          [f"User:CN=client-{n},OU=kafka,O=Example" for n in range(50)]
        self.transactions = [f"{rng.choice(_WORDS)}-txn-{n}" for n in range(1000)]
        self.topic_ids = [uuid.UUID(bytes=rng.randbytes(16)) for _ in self.topics]
        self.cluster_ids = ["".join(rng.choices(_IDENT[:36], k=22)) for _ in range(4)]

    def _number(self) -> int:
        return int(10 ** (self.random() * 3))

    def _topic(self) -> str:
        rng = self.rng
        if rng.random() < 0.01:  # Kafka allows 249 characters: a long one needs a two-byte length
            return "long." + ".".join(rng.choices(_WORDS, k=40))[:rng.randint(130, 244)]
        middle = rng.choice(_WORDS) + (f"-{rng.choice(_WORDS)}" if rng.random() < 0.4 else "")
        number = f"-{self._number()}" if rng.random() < 0.5 else ""
        return f"{rng.choice(_ENVS)}{middle}{number}{rng.choice(_TAILS)}"

    def _client(self) -> str:
        rng = self.rng
        role = rng.choice(_ROLES)
        if role == "streams":
            app = f"{rng.choice(_WORDS)}-app-{uuid.UUID(bytes=rng.randbytes(16))}"
            return f"{app}-StreamThread-{rng.randint(1, 8)}-consumer"
        return f"{rng.choice(_WORDS)}-{role}-{self._number()}" if rng.random() < 0.8 else role

    def hot(self, pool: Sequence[Any]) -> Maker:
        """Draws from ``pool``, its first entries much more often than its last (Zipf-like)."""
        random_, count = self.random, len(pool)
        return lambda: pool[int(count * random_() ** 3)]

    def client(self) -> str:
        return self.clients[int(len(self.clients) * self.random() ** 3)]

    def string_maker(self, key: str) -> Maker:
        """The string distribution of a field, from its name."""
        lowered = key.lower()
        for pattern, pick in self._string_rules():
            if linear(pattern).search(lowered):
                return pick()
        return self.text

    def _string_rules(self) -> tuple[tuple[str, Callable[[], Maker]], ...]:
        return (
            (r"topic", lambda: self.hot(self.topics)),
            (r"clientid|clientsoftwarename", lambda: self.hot(self.clients)),
            (r"memberid|instanceid", lambda: self.member_id),
            (r"group|coordinatorkeys", lambda: self.hot(self.groups)),
            (r"host|listener", lambda: self.hot(self.hosts)),
            (r"rack", lambda: self.hot(self.racks)),
            (r"principal|^user$|owner|requester|renewers", lambda: self.hot(self.principals)),
            (r"transactionalid", lambda: self.hot(self.transactions)),
            (r"message|reason", lambda: self.hot(_MESSAGES)),
            (r"protocoltype", lambda: self.hot(("consumer", "connect", "streams"))),
            (r"protocol|assignor", lambda: self.hot(("range", "cooperative-sticky", "roundrobin", "sticky",
                                                     "uniform"))),
            (r"mechanism", lambda: self.hot(("PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256", "OAUTHBEARER", "GSSAPI"))),
            (r"clusterid", lambda: self.hot(self.cluster_ids)),
            (r"^key$|configurationkeys|^name$|resourcename", lambda: self._mixed(self.hot(_CONFIG_KEYS),
                                                                               self.hot(self.topics))),
            (r"^value$", lambda: self._mixed(self.hot(_CONFIG_VALUES), self.text)),
        )

    def _mixed(self, first: Maker, second: Maker) -> Maker:
        random_ = self.random
        return lambda: first() if random_() < 0.5 else second()

    def member_id(self) -> str:
        """Empty when joining; else ``client-id`` plus a random UUID, as Kafka's coordinator makes them."""
        if self.random() < 0.1:
            return ""
        return f"{self.client()}-{uuid.UUID(bytes=self.rng.randbytes(16))}"

    def text(self) -> str:
        """Free text: mostly short identifiers, some printable ASCII or non-Latin text, a few long."""
        random_, randbytes = self.random, self.rng.randbytes
        length = int(-math.log(1.0 - random_()) * 10.0)
        if random_() < LONG_CHANCE:
            length = 128 + int(random_() * 300)
        roll = random_()
        if roll < 0.6:
            return randbytes(length).translate(_IDENT_TABLE).decode("ascii")
        if roll < 0.88:
            return randbytes(length).translate(_ASCII_TABLE).decode("ascii")
        if roll < 0.97:
            return "".join(self.rng.choices(_TEXT, k=length))
        return "".join(self.rng.choices(_TEXT + _ASTRAL, k=length))

    def uuid_maker(self, key: str) -> Maker:
        """Topic ids from the topics' pool; other UUIDs new; a few zero (Kafka's "none")."""
        random_, randbytes = self.random, self.rng.randbytes
        zero = uuid.UUID(int=0)
        if "topic" in key.lower():
            topic_id = self.hot(self.topic_ids)
            return lambda: zero if random_() < ZERO_UUID_CHANCE else topic_id()
        return lambda: zero if random_() < ZERO_UUID_CHANCE else uuid.UUID(bytes=randbytes(16))


__all__ = ["SIZE_CLASSES", "Maker", "Traffic", "Vocabulary", "int_maker"]
