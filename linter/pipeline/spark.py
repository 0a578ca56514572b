"""The Spark session of a pipeline run: embedded ``local[*]`` by default, or ``--master URL``.

Executors run this package's own functions (lint, compare, the codec), so they need krpc-lint
importable: in local mode and on a standalone cluster on this host they use this interpreter
(``PYSPARK_PYTHON``); on a remote cluster install ``krpc-lint[spark]`` on the workers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOCAL = "local[*]"
LOG_CONFIG = Path(__file__).with_name("log4j2.properties").as_uri()
# The throughput collector: a run is one batch job, and G1's concurrent threads compete with the
# Python workers for the few cores of a laptop or CI machine (a cold 1M-frame replay on 2 cores:
# 19-21 s with G1, 16-17 s with this; bench/replay.py).
JVM_OPTIONS = "-XX:+UseParallelGC"


class SparkUnavailable(RuntimeError):
    """PySpark or Java is missing: the message says what to install."""


def require_pyspark() -> None:
    """Fail early, with the fix, when the ``spark`` extra or Java is missing."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable("the pipeline needs PySpark: pip install 'krpc-lint[spark]'") from None
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java or not os.path.exists(java):
        raise SparkUnavailable("Spark needs Java 17 or newer: install a JDK (e.g. apt install openjdk-17-jre-headless) "
                               "or set JAVA_HOME")
    version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
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


def session(master: str | None = None, app: str = "krpc-lint") -> SparkSession:
    """A Spark session for one run; quiet, UI off, UTC, Arrow on, workers on this interpreter."""
    require_pyspark()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.appName(app).master(master or LOCAL)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.python.worker.reuse", "true")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG_CONFIG} {JVM_OPTIONS}")
               .config("spark.executor.extraJavaOptions", JVM_OPTIONS))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")  # a failure reaches the user as one line (replay.spark_reason), never a Java trace
    return spark
