"""The Spark session of a pipeline run: embedded ``local[*]`` by default, or ``--master URL``.

Executors run this package's own functions (lint, compare, the codec), so they need krpc-lint
importable: in local mode and on a standalone cluster on this host they use this interpreter
(``PYSPARK_PYTHON``); on a remote cluster install ``krpc-lint[spark]`` on the workers.
"""

from __future__ import annotations

import functools
import importlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from linter.errors import KrpcLintError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOCAL = "local[*]"
IN_PROCESS = "in-process"  # the master a run names when it ran in this process, without Spark (audit, replay, size)
LOG_CONFIG = Path(__file__).with_name("log4j2.properties").as_uri()
# The throughput collector: a run is one batch job, and G1's concurrent threads compete with the
# Python workers for the few cores of a laptop or CI machine (a cold 1M-frame replay on 2 cores:
# 19-21 s with G1, 16-17 s with this; bench/replay.py).
JVM_OPTIONS = "-XX:+UseParallelGC"


class SparkUnavailable(KrpcLintError, RuntimeError):
    """PySpark or Java is missing: the message says what to install."""


@functools.cache
def require_pyspark() -> None:
    """Fail early, with the fix, when the ``spark`` extra or Java is missing. Checked once a process when
    they are there (a failure is not remembered): ``java -version`` is a JVM start, and a command that checks
    before its first line of output checks again in ``session``."""
    try:
        importlib.import_module("pyspark")
    except ImportError:
        raise SparkUnavailable("the pipeline needs PySpark: pip install 'krpc-lint[spark]'") from None
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkUnavailable("Spark needs Java 17 or newer: install a JDK (e.g. apt install openjdk-17-jre-headless) "
                               "or set JAVA_HOME")
    version = subprocess.run([java, "-version"], capture_output=True, check=False, text=True).stderr
    major = _java_major(version)
    if major is not None and major < 17:
        raise SparkUnavailable(f"Spark needs Java 17 or newer, found Java {major} ({java}); set JAVA_HOME")


def _java_major(text: str) -> int | None:
    """17 from ``openjdk version "17.0.15"``, 8 from ``"1.8.0_392"``."""
    quoted = text.split('"')
    if len(quoted) < 2:
        return None
    parts = quoted[1].split(".")
    try:
        return int(parts[1]) if parts[0] == "1" and len(parts) > 1 else int(parts[0])
    except ValueError:
        return None


# What the JVM prints at every start that says nothing to a user: Spark 4's module notice and its advice
# on log levels (krpc-lint turns Spark's logging off). Every other line of the JVM's stderr passes.
NOISE = (b"WARNING: Using incubator modules", b"Setting default log level", b"To adjust logging level")


def session(master: str | None = None, app: str = "krpc-lint") -> SparkSession:
    """A Spark session for one run; quiet, UI off, UTC, Arrow on, workers on this interpreter."""
    require_pyspark()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    conf = SparkConf().setAppName(app).setMaster(master or LOCAL).setAll([
        ("spark.ui.enabled", "false"),
        ("spark.ui.showConsoleProgress", "false"),
        ("spark.sql.session.timeZone", "UTC"),
        ("spark.sql.execution.arrow.pyspark.enabled", "true"),
        ("spark.python.worker.reuse", "true"),
        ("spark.driver.bindAddress", "127.0.0.1"),
        ("spark.driver.host", "127.0.0.1"),
        ("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG_CONFIG} {JVM_OPTIONS}"),
        ("spark.executor.extraJavaOptions", JVM_OPTIONS),
    ])
    if SparkSession.getActiveSession() is None and SparkContext._active_spark_context is None:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
        _forward_stderr(gateway.proc.stderr)
        SparkContext(conf=conf, gateway=gateway)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")  # a failure reaches the user as one line (replay.spark_reason), never a Java trace
    return spark


def _forward_stderr(stream: BinaryIO) -> None:
    """Copy the JVM's stderr to ours, line by line, without ``NOISE`` (a thread: it runs as long as the JVM)."""
    def forward() -> None:
        out = sys.stderr.buffer if hasattr(sys.stderr, "buffer") else None
        for line in iter(stream.readline, b""):
            if line.startswith(NOISE):
                continue
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode("utf-8", "replace"))

    threading.Thread(target=forward, name="krpc-lint-jvm-stderr", daemon=True).start()
