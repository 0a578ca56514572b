"""A real Spark standalone cluster on 127.0.0.1 (one master, one worker), started from the
installed pyspark's ``bin/spark-class``, for the pipeline's cluster tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_SECONDS = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _start(log: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_HOME": str(_spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_NO_DAEMONIZE": "1"}
    with open(log, "wb") as out:
        return subprocess.Popen([str(_spark_home() / "bin" / "spark-class"), *args], stdout=out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise RuntimeError(f"{log.name} exited with {process.returncode}:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.3)
    raise TimeoutError(f"no {text!r} in {log} after {STARTUP_SECONDS} s:\n{log.read_text(errors='replace')[-2000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def standalone_cluster(work: Path, cores: int = 2) -> Iterator[str]:
    """Yield the master URL of a running cluster; both processes are stopped afterwards."""
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    master = _start(work / "master.log", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(port), "--webui-port", str(free_port()))
    worker = None
    try:
        _wait_for(work / "master.log", "I have been elected leader", master)
        worker = _start(work / "worker.log", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                        "--cores", str(cores), "--memory", "2g", "--webui-port", str(free_port()),
                        "--work-dir", str(work / "worker"))
        _wait_for(work / "worker.log", "Successfully registered with master", worker)
        yield url
    finally:
        for process in (worker, master):
            if process is not None:
                _stop(process)
