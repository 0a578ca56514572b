"""Shared by the bench scripts: the median of several timed runs."""

from __future__ import annotations

import statistics
import time


def median_seconds(fn, runs: int) -> float:
    """Median wall time of ``runs`` calls: robust to the odd slow run of a shared machine."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def timed(command: list[str]) -> tuple[float, str]:
    """Wall time of a whole process (start-up included) and its first line of output; exit 0 or 1 expected."""
    import subprocess

    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr.strip()}")
    lines = (done.stdout + done.stderr).strip().splitlines()
    return time.perf_counter() - started, lines[0] if lines else ""


def side_by_side(sides: dict[str, list[str]], runs: int, frames: int) -> None:
    """Run each command ``runs`` times, alternated (a change of load hits every side), and print the medians
    against the first side, the floor: seconds, frames per second, ratio; then each side's first line."""
    samples: dict[str, list[float]] = {name: [] for name in sides}
    said: dict[str, str] = {}
    for _ in range(runs):
        for name, command in sides.items():
            seconds, said[name] = timed(command)
            samples[name].append(seconds)
    floor = statistics.median(next(iter(samples.values())))
    width = max(len(name) for name in sides) + 2
    print(f"{'what':<{width}}{'seconds':>9}{'frames/s':>12}{'vs floor':>10}")
    for name in sides:
        seconds = statistics.median(samples[name])
        print(f"{name:<{width}}{seconds:>9.2f}{frames / seconds:>12,.0f}{seconds / floor:>9.2f}x")
    for name, line in said.items():
        print(f"  {name}: {line}")
