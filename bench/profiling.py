"""Where the server's CPU goes: py-spy samples every server process while workloads run, and
the samples are summed by layer (HTTP and JSON, validation, SQL building, driver round trips,
engine, events and streams, ...).

py-spy writes collapsed stacks ("frame;frame;frame count", outermost first). A sample is
charged to the layer of its innermost frame that some layer claims, so time in a C helper
called by the JSON encoder counts as JSON and time in asyncpg's protocol counts as the
driver, wherever they were called from. The raw file is kept, for a flame graph
(`flamegraph.pl`, speedscope.app, or `py-spy record --format flamegraph` yourself).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

#: (layer, substrings of a frame's "function (file:line)"), first match wins, so the more
#: specific patterns come first.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "events and streams",
        (
            "app/engine/events/",
            "app/db/lifecycle/events",
            "app/domain/lifecycle/events",
            "app/api/routes/events",
        ),
    ),
    (
        "telemetry and metrics",
        ("opentelemetry", "prometheus_client", "app/observability/", "logging/"),
    ),
    (
        "validation",
        ("jsonschema", "pydantic", "referencing/", "app/domain/tools/schema_validator"),
    ),
    (
        "driver round trips",
        (
            "asyncpg",
            "sqlalchemy/dialects/postgresql/asyncpg",
            "sqlalchemy/connectors/asyncio",
            "sqlalchemy/util/_concurrency",
            "greenlet",
        ),
    ),
    ("SQL building and results", ("sqlalchemy",)),
    (
        "HTTP and JSON",
        (
            "uvicorn",
            "starlette",
            "fastapi",
            "httptools",
            "h11",
            "anyio",
            "json/",
            "orjson",
            "app/api/",
        ),
    ),
    ("model and tools", ("app/adapters/",)),
    ("engine and domain", ("app/",)),
    ("event loop and sockets", ("asyncio/", "uvloop", "selectors", "socket", "ssl")),
]
OTHER = "other (stdlib, interpreter)"


def layer_of(frame: str) -> str | None:
    for layer, patterns in LAYERS:
        if any(p in frame for p in patterns):
            return layer
    return None


def summarize(collapsed: Path, steps: int | None = None) -> list[str]:
    """Samples by layer (innermost claimed frame) and the hottest leaf functions."""
    by_layer: Counter[str] = Counter()
    by_leaf: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        by_leaf[frames[-1]] += count
        for frame in set(frames):
            if "app/" in frame:
                inclusive[frame] += count
        layer = next((found for f in reversed(frames) if (found := layer_of(f))), OTHER)
        by_layer[layer] += count
    if not total:
        return ["no samples (is py-spy allowed to attach? it needs ptrace)"]
    lines = [f"{total} samples; by layer (innermost frame a layer claims):"]
    for layer, count in by_layer.most_common():
        lines.append(f"  {layer:<30} {100 * count / total:5.1f} %")
    lines.append("hottest functions (self time):")
    for leaf, count in by_leaf.most_common(25):
        lines.append(f"  {100 * count / total:5.1f} %  {leaf[:110]}")
    lines.append("the service's own functions, with what they call (inclusive):")
    for frame, count in inclusive.most_common(40):
        lines.append(f"  {100 * count / total:5.1f} %  {frame[:110]}")
    if steps:
        lines.append(f"({steps} steps profiled)")
    return lines


def py_spy() -> str | None:
    return shutil.which("py-spy") or next(
        (str(p) for p in [Path(__file__).resolve().parents[1] / ".venv/bin/py-spy"] if p.exists()),
        None,
    )


@contextlib.contextmanager
def profiled(pid: int, out: Path, rate: int = 200) -> Iterator[Path]:
    """py-spy records `pid` and its children until the block ends; yields the collapsed file."""
    executable = py_spy()
    if executable is None:
        raise SystemExit("--profile needs py-spy (pip install py-spy; `make bench` installs it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    # --gil: only the thread holding the GIL is sampled, so threads parked on a lock (the
    # supervisor's, the exporters') do not count as CPU.
    command = [executable, "record", "--pid", str(pid), "--subprocesses", "--gil", "--nonblocking"]
    if os.environ.get("PYSPY_NATIVE"):
        command.append("--native")
    command += ["--rate", str(rate), "--format", "raw", "--output", str(out)]
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)  # py-spy attaches to every process before the workload starts
    try:
        yield out
    finally:
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            recorder.kill()
