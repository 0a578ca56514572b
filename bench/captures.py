"""Make real Kafka traffic: real clients against librdkafka's mock broker, captured with tcpdump (issue 27).

    .venv/bin/python bench/captures.py OUT_DIR [--clients confluent-kafka kafka-python aiokafka kafkajs
                                                          kafka-python-0_10 librdkafka-0_9]
                                               [--no-variants] [--no-tshark]

The frames reader is tested on these captures, so they must be what real clients put on a real wire, not
what this project believes the protocol to be. For each client, a fresh mock cluster (librdkafka's, in the
confluent-kafka wheel: a client with ``test.mock.num.brokers=1`` starts one in-process on a 127.0.0.1
port, which ``list_topics()`` shows) runs in a child process; ``tcpdump -i lo -s 0 -U 'tcp port PORT'``
captures while the client runs, bounded in time and count, then stops on SIGINT so the file ends on a
whole record. Writes ``OUT_DIR/<name>.pcap`` and, where tshark exists, ``OUT_DIR/<name>.tshark.jsonl``
(what Wireshark's Kafka dissector reads: ``tests/support/tshark.py``). Needs root (or capture rights)
for tcpdump, Python's confluent-kafka, kafka-python and aiokafka (the test extras), and node/npm for
kafkajs (installed at run time into a temporary folder, never into the repository).

What each client does:
- confluent-kafka: admin (create topic, list topics, describe cluster, list groups), produce 100 messages
  with acks=all and 100 with acks=0, consume them in a group committing offsets synchronously;
- kafka-python: the same (with ``api_version=(2, 3)``: see below);
- aiokafka: produce (acks=all, acks=0), consume in a group committing offsets;
- kafkajs: admin (create topic, list topics, topic metadata, list groups, describe cluster), produce
  (acks=-1, acks=0), consume in a group with auto-commit.
- kafka-python-0_10: kafka-python's run with ``api_version=(0, 10)``: it still asks ApiVersions v0, then sends
  Produce v2, Fetch v2, ListOffsets v0, Metadata v1, ListGroups v0 (the mock closes on it), JoinGroup,
  SyncGroup and LeaveGroup v0, OffsetCommit v2, OffsetFetch v1;
- librdkafka-0_9: confluent-kafka's run with ``api.version.request=false`` and ``broker.version.fallback=0.9.0``:
  no ApiVersions; Produce v1, Fetch v1, Metadata v0, ListOffsets v0 (admin calls needing newer APIs fail in
  the client). These two are the old clients of ``krpc-lint readiness`` (issue 28): requests at versions Kafka
  4.0 removed (KIP-896). Underscores, not dots, in their names: a sidecar is named by the text before the
  first dot. aiokafka 0.14 has no such scenario: its ``api_version`` is a no-op (deprecated since 0.13).
Variants (unless ``--no-variants``): confluent-kafka again with ``tcpdump -i any`` (Linux cooked SLL2
headers) and with ``--snapshot-length 96`` (every longer packet truncated).

What the mock broker (librdkafka 2.16.0) does not do, seen while writing this:
- it has no CreateTopics, DescribeGroups or ListGroups (its ApiVersions response omits them) and its
  Metadata names controller 0, a broker that does not exist: the admin calls fail in the client, most
  without a request on the wire (kafka-python still sends ListGroups v2, which the mock cannot parse: it
  closes the connection); topics are auto-created by Metadata; the admin calls that work are those made
  of Metadata alone (list topics; describe cluster in kafka-python and kafkajs);
- to ApiVersions v3+ it answers UNSUPPORTED_VERSION in a layout that is neither v0's nor a flexible
  version's (``00 23 01 00 12 00 00 00 02 00 00 00 00``): librdkafka and kafkajs retry with an older
  version, kafka-python cannot decode it and reconnects forever, hence its ``api_version=(2, 3)`` (which
  makes it ask ApiVersions v2); the confluent-kafka capture holds that response;
- it answers Produce requests sent with acks=0 (a real broker does not): aiokafka logs an IndexError on
  the unexpected response and kafkajs "Response without match";
- kafkajs cannot parse its LeaveGroup v3 response (logged, harmless).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import tshark
from support.old_clients import OLD_CLIENTS

KAFKAJS = "kafkajs@2.2.4"
MESSAGES = 100  # per acks setting; consumers read twice as many
CONSUME_SECONDS = (2.0, 10.0)  # keep polling at least this long (heartbeats), never longer than that
CLIENT_TIMEOUT = 90
OLD_NAMES = list(OLD_CLIENTS)  # pinned to protocol versions a Kafka 4 broker refuses (tests/support/old_clients.py)
NAMES = ["confluent-kafka", "kafka-python", "aiokafka", "kafkajs", *OLD_NAMES]
LIBRDKAFKA_0_9 = {"api.version.request": False, "broker.version.fallback": "0.9.0"}


@dataclass(frozen=True)
class Capture:
    """One capture to make: which client, on which interface, cut at which snapshot length (0: whole)."""

    name: str
    client: str
    interface: str = "lo"
    snaplen: int = 0


def plan(clients: list[str], variants: bool) -> list[Capture]:
    """One capture per client, then the two variants of the first client's."""
    captures = [Capture(client, client) for client in clients]
    if variants and clients:
        first = clients[0]
        captures += [Capture(f"{first}-any", first, interface="any"),
                     Capture(f"{first}-snaplen96", first, snaplen=96)]
    return captures


# --- the broker: librdkafka's mock cluster, held by a child process -------------------------------------


def serve_broker() -> None:
    """Child process: start a mock cluster, print its bootstrap address, keep it until stdin closes."""
    from confluent_kafka import Producer

    holder = Producer({"test.mock.num.brokers": 1, "broker.address.family": "v4",
                       "topic.metadata.refresh.interval.ms": -1, "log_level": 3})
    broker = next(iter(holder.list_topics(timeout=10).brokers.values()))
    holder.poll(1.0)  # its own connections settle before the capture starts, so captures hold the client's only
    print(f"{broker.host}:{broker.port}", flush=True)
    sys.stdin.read()  # the parent closes it (or dies): the cluster goes with this process


@contextmanager
def mock_broker() -> Iterator[str]:
    """A fresh mock cluster for one capture; yields its ``127.0.0.1:PORT``."""
    child = subprocess.Popen([sys.executable, __file__, "_broker"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        bootstrap = child.stdout.readline().strip()
        if not bootstrap.startswith("127.0.0.1:"):
            raise RuntimeError(f"mock cluster did not start (said {bootstrap!r})")
        yield bootstrap
    finally:
        _end(child, close_stdin=True)


# --- the capture ---------------------------------------------------------------------------------------


@contextmanager
def tcpdump(out: Path, port: int, interface: str, snaplen: int) -> Iterator[None]:
    """Capture ``tcp port PORT`` on ``interface`` into ``out`` while the block runs."""
    # --immediate-mode: without it the last second's packets stay in the kernel's ring when SIGINT comes
    argv = ["tcpdump", "-i", interface, "-w", str(out), "-U", "--immediate-mode", "--buffer-size", "32768",
            "--snapshot-length", str(snaplen), f"tcp port {port}"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        said = [proc.stderr.readline()]  # "data link type ..." may come first
        while said[-1] and "listening on" not in said[-1]:
            said.append(proc.stderr.readline())
        if not said[-1]:  # EOF before "listening on": tcpdump stopped
            raise RuntimeError(f"tcpdump did not start: {''.join(said).strip()}")
        yield
        time.sleep(0.5)  # the last segments and FINs of the client's connections
    finally:
        _end(proc, close_stdin=False)
    stats = ", ".join(line for line in proc.stderr.read().split("\n") if line) if proc.stderr else ""
    print(f"tcpdump: {stats}", flush=True)
    if " 0 packets dropped by kernel" not in stats:
        raise RuntimeError(f"tcpdump lost packets: {stats} (a fixture must hold all that was sent)")


def _end(proc: subprocess.Popen[str], close_stdin: bool) -> None:
    """Stop a child cleanly: close its stdin or SIGINT it (tcpdump then ends its file on a whole record)."""
    if proc.poll() is None:
        if close_stdin and proc.stdin is not None:
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def make(capture: Capture, out_dir: Path, node_dir: Path | None) -> Path:
    """Run ``capture``'s client against a fresh broker under tcpdump; the pcap written."""
    out = out_dir / f"{capture.name}.pcap"
    with mock_broker() as bootstrap:
        port = int(bootstrap.rsplit(":", 1)[1])
        with tcpdump(out, port, capture.interface, capture.snaplen):
            run_client(capture.client, bootstrap, node_dir)
    return out


def run_client(client: str, bootstrap: str, node_dir: Path | None) -> None:
    """The client in its own process (bounded): its failures show as its output, not as ours."""
    if client == "kafkajs":
        assert node_dir is not None
        argv = ["node", str(node_dir / "client.js"), bootstrap]
    else:
        argv = [sys.executable, __file__, "_client", client, bootstrap]
    env = dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=CLIENT_TIMEOUT, env=env, check=False)
    print(f"{client}: exit {done.returncode}\n{_indent(done.stdout)}", flush=True)
    if done.returncode != 0:
        raise RuntimeError(f"{client} failed:\n{done.stderr[-2000:]}")


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


# --- the clients (each runs in a child process: `captures.py _client NAME BOOTSTRAP`) ------------------


def value(i: int) -> bytes:
    """A message of 64 bytes, long enough that a 96-byte snapshot cuts the records."""
    return f"message {i} ".ljust(64, ".").encode()


def consuming() -> Callable[[int], bool]:
    """Whether a consume loop goes on, given how many it read: until 2*MESSAGES are read and the
    minimum time is up (heartbeats), never past the limit."""
    start = time.monotonic()
    least, most = CONSUME_SECONDS

    def more(read: int) -> bool:
        elapsed = time.monotonic() - start
        return elapsed < most and not (read >= 2 * MESSAGES and elapsed >= least)

    return more


def attempt(name: str, call: Callable[[], object]) -> None:
    """One admin call: what it gave or why it failed (the mock broker lacks some APIs)."""
    try:
        print(name, "ok", str(call())[:80])
    except Exception as exc:  # noqa: BLE001  (reported: which admin calls the mock broker serves)
        print(name, "failed:", repr(exc)[:120])


def confluent_client(bootstrap: str, pinned: dict[str, str | bool] | None = None) -> None:
    """confluent-kafka (librdkafka): admin, produce with acks=all and acks=0, consume in a group;
    ``pinned`` is added to every client's configuration (the old protocol of librdkafka-0_9)."""
    from confluent_kafka import Consumer, Producer, TopicCollection
    from confluent_kafka.admin import AdminClient, NewTopic

    base = {"bootstrap.servers": bootstrap, **(pinned or {})}
    admin = AdminClient(base)
    attempt("create_topics", lambda: admin.create_topics([NewTopic("ck-admin", 2, 1)],
                                                         request_timeout=2)["ck-admin"].result(3))
    attempt("list_topics", lambda: sorted(admin.list_topics(timeout=3).topics))
    attempt("describe_cluster", lambda: admin.describe_cluster(request_timeout=2).result(3))
    attempt("describe_topics", lambda: admin.describe_topics(TopicCollection(["ck"]),
                                                             request_timeout=2)["ck"].result(3))
    attempt("list_consumer_groups", lambda: admin.list_consumer_groups(request_timeout=2).result(3).errors)
    for acks in ("all", "0"):
        producer = Producer({**base, "acks": acks, "linger.ms": 5})
        for i in range(MESSAGES):
            producer.produce("ck", value(i), key=b"key")
        print(f"acks={acks}: unsent", producer.flush(5))
    consumer = Consumer({**base, "group.id": "ck-group", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "heartbeat.interval.ms": 500})
    consumer.subscribe(["ck"])
    read, more = 0, consuming()
    while more(read):
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            read += 1
            if read % 50 == 0:
                consumer.commit(message, asynchronous=False)
    consumer.close()
    print("consumed", read)


def kafka_python_client(bootstrap: str, api_version: tuple[int, ...] = (2, 3)) -> None:
    """kafka-python: admin, produce with acks=all and acks=0, consume in a group committing offsets;
    ``api_version`` fixes the protocol it speaks ((0, 10): kafka-python-0_10)."""
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    common = {"bootstrap_servers": bootstrap, "api_version": api_version, "request_timeout_ms": 3000}
    admin = KafkaAdminClient(**common)
    attempt("create_topics", lambda: admin.create_topics([NewTopic("kp-admin", 2, 1)], timeout_ms=2000))
    attempt("list_topics", admin.list_topics)
    attempt("describe_cluster", admin.describe_cluster)
    attempt("describe_topics", lambda: admin.describe_topics(["kp"]))
    attempt("list_groups", admin.list_groups)
    admin.close()
    for acks in ("all", 0):
        producer = KafkaProducer(acks=acks, linger_ms=5, **common)
        for i in range(MESSAGES):
            producer.send("kp", value(i), key=b"key")
        producer.flush(5)
        producer.close(5)
        print(f"acks={acks}: sent")
    consumer = KafkaConsumer("kp", group_id="kp-group", auto_offset_reset="earliest", enable_auto_commit=False,
                             heartbeat_interval_ms=500, **common)
    read, more = 0, consuming()
    while more(read):
        batches = consumer.poll(200)
        read += sum(len(records) for records in batches.values())
        if batches:
            consumer.commit()
    consumer.close()
    print("consumed", read)


def aiokafka_client(bootstrap: str) -> None:
    """aiokafka: produce with acks=all and acks=0, consume in a group committing offsets."""
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def produce(acks: str | int) -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=acks, linger_ms=5)
        await producer.start()
        try:
            sent = [await producer.send("ak", value(i), key=b"key") for i in range(MESSAGES)]
            await asyncio.wait_for(asyncio.gather(*sent, return_exceptions=True), 5)
        finally:
            await producer.stop()
        print(f"acks={acks}: sent")

    async def consume() -> None:
        consumer = AIOKafkaConsumer("ak", bootstrap_servers=bootstrap, group_id="ak-group",
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    heartbeat_interval_ms=500)
        await consumer.start()
        read, more = 0, consuming()
        try:
            while more(read):
                batches = await consumer.getmany(timeout_ms=200)
                read += sum(len(records) for records in batches.values())
                if batches:
                    await consumer.commit()
        finally:
            await consumer.stop()
        print("consumed", read)

    async def main() -> None:
        await produce("all")
        await produce(0)
        await consume()

    asyncio.run(main())


CLIENTS: dict[str, Callable[[str], None]] = {
    "confluent-kafka": confluent_client, "kafka-python": kafka_python_client, "aiokafka": aiokafka_client,
    "kafka-python-0_10": partial(kafka_python_client, api_version=(0, 10)),
    "librdkafka-0_9": partial(confluent_client, pinned=LIBRDKAFKA_0_9),
}

KAFKAJS_CLIENT = """
const { Kafka, logLevel } = require('kafkajs');
const kafka = new Kafka({ clientId: 'kafkajs-capture', brokers: [process.argv[2]], logLevel: logLevel.NOTHING,
                          retry: { retries: 2 }, connectionTimeout: 3000, requestTimeout: 5000 });
const value = (i) => `message ${i} `.padEnd(64, '.');
async function attempt(name, call) {
  try { console.log(name, 'ok', JSON.stringify(await call()).slice(0, 80)); }
  catch (e) { console.log(name, 'failed:', String(e).slice(0, 120)); }
}
async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await attempt('createTopics', () => admin.createTopics({ topics: [{ topic: 'kj-admin', numPartitions: 2 }], timeout: 2000 }));
  await attempt('listTopics', () => admin.listTopics());
  await attempt('fetchTopicMetadata', () => admin.fetchTopicMetadata({ topics: ['kj'] }));
  await attempt('listGroups', () => admin.listGroups());
  await attempt('describeCluster', () => admin.describeCluster());
  await admin.disconnect();
  for (const acks of [-1, 0]) {
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < __MESSAGES__; i += 10) {
      const messages = Array.from({ length: 10 }, (_, j) => ({ key: 'key', value: value(i + j) }));
      await producer.send({ topic: 'kj', acks, messages });
    }
    await producer.disconnect();
    console.log(`acks=${acks}: sent`);
  }
  const consumer = kafka.consumer({ groupId: 'kj-group', heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'kj', fromBeginning: true });
  let read = 0;
  const start = Date.now();
  await new Promise((resolve) => {
    const tick = setInterval(() => {
      const elapsed = (Date.now() - start) / 1000;
      if ((read >= 2 * __MESSAGES__ && elapsed >= __LEAST__) || elapsed >= __MOST__) { clearInterval(tick); resolve(); }
    }, 100);
    consumer.run({ autoCommit: true, autoCommitInterval: 200, eachMessage: async () => { read++; } });
  });
  await consumer.disconnect();
  console.log('consumed', read);
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
"""


def install_kafkajs(into: Path) -> Path:
    """kafkajs from npm into a scratch folder (never the repository), with the client script beside it."""
    subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(into), KAFKAJS],
                   check=True, capture_output=True, timeout=300)
    least, most = CONSUME_SECONDS
    script = KAFKAJS_CLIENT.replace("__MESSAGES__", str(MESSAGES)).replace("__LEAST__", str(least))
    (into / "client.js").write_text(script.replace("__MOST__", str(most)), encoding="utf-8")
    return into


# --- versions and the whole run ------------------------------------------------------------------------


def versions(node_dir: Path | None) -> dict[str, str]:
    """The tools that made the captures, for fixtures/captures/README.md."""
    from importlib.metadata import version

    import confluent_kafka

    found = {"tcpdump": _first_line(["tcpdump", "--version"]),
             "confluent-kafka": f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})",
             "kafka-python": version("kafka-python"), "aiokafka": version("aiokafka")}
    if node_dir is not None:
        found["node"] = _first_line(["node", "--version"])
        package = json.loads((node_dir / "node_modules" / "kafkajs" / "package.json").read_text("utf-8"))
        found["kafkajs"] = package["version"]
    if tshark.available():
        found["tshark"] = tshark.version()
    return found


def _first_line(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    return (done.stdout or done.stderr).splitlines()[0].strip()


def make_all(out_dir: Path, clients: list[str], variants: bool, read_tshark: bool) -> None:
    """Every capture of the plan, with tshark's reading beside each."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="captures-node-") as scratch:
        node_dir = install_kafkajs(Path(scratch)) if "kafkajs" in clients else None
        for capture in plan(clients, variants):
            pcap = make(capture, out_dir, node_dir)
            if read_tshark:
                tshark.write(pcap)
            print(f"wrote {pcap} ({pcap.stat().st_size} bytes)", flush=True)
        print(json.dumps(versions(node_dir), indent=1))


def main(argv: list[str]) -> int:
    if argv[:1] == ["_broker"]:
        serve_broker()
        return 0
    if argv[:1] == ["_client"]:
        CLIENTS[argv[1]](argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--clients", nargs="+", choices=NAMES, default=NAMES)
    parser.add_argument("--no-variants", action="store_true", help="skip the -i any and snaplen 96 captures")
    parser.add_argument("--no-tshark", action="store_true", help="do not write the *.tshark.jsonl readings")
    args = parser.parse_args(argv)
    for tool in ["tcpdump"] + (["node", "npm"] if "kafkajs" in args.clients else []):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not installed")
    read_tshark = not args.no_tshark and tshark.available()
    clients = [name for name in NAMES if name in args.clients]  # the variants are the first one's
    try:
        make_all(args.out_dir, clients, not args.no_variants, read_tshark)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"captures: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
