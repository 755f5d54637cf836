"""Alternating A/B pairs of the run benchmark: the code at two commits, benchmarked one after
the other, pair after pair, in one sitting, then each figure's median and range per side.

    .venv/bin/python bench/ab_pairs.py --before 3f54fae [--after HEAD] [--pairs 5] [-- ARGS]

Each commit is checked out in a temporary git worktree (detached) and measured by its own
`bench/bench_runs.py`, run with this checkout's virtualenv and the worktree on PYTHONPATH.
ARGS go to `bench_runs.py` (default below: the lone N = 2 run and 16 and 64 clients, long
enough that a workload lasts seconds, not one). On a shared two-core box the spread between
sittings is as large as the differences sought, so only pairs taken side by side compare.
Prints each run's summary and, per workload, before and after as median [min–max] and the
change of the medians. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARGS = [
    "--only", "1,4,5", "--no-pgbench", "--no-one-worker",
    "--seq-runs", "150", "--c16-runs", "2000", "--c64-runs", "3200",
]  # fmt: skip
#: A summary row after its 60-character title (`bench_runs.py`'s `== summary`).
_ROW = re.compile(
    r"(?P<p50>n/a|[\d.]+ ms)\s+(?P<runs_s>[\d.]+)\s+(?P<steps_s>[\d.]+)\s+"
    r"(?P<xacts>n/a|[\d.]+)\s+(?P<wal>\d+) B\s+(?P<own_wal>n/a|\d+ B)\s+(?P<cpu>[\d.]+) ms"
)
#: What is compared, by name: (column, unit, whether less is better).
FIGURES = {
    "p50": ("p50", "ms", True),
    "steps/s": ("steps_s", "", False),
    "xacts/run": ("xacts", "", True),
    "WAL/step": ("own_wal", "B", True),
    "cpu/step": ("cpu", "ms", True),
}


def summary(output: str) -> dict[str, dict[str, float]]:
    """Per workload (its title), the figures of a `bench_runs.py` summary."""
    rows: dict[str, dict[str, float]] = {}
    lines = output.split("== summary", 1)[-1].splitlines()[2:]
    for line in lines:
        found = _ROW.search(line[60:])
        if not line.strip() or found is None:
            continue
        figures = {}
        for name, value in found.groupdict().items():
            number = value.split()[0]
            if number != "n/a":
                figures[name] = float(number)
        rows[line[:60].strip()] = figures
    return rows


def measure(tree: Path, args: list[str]) -> dict[str, dict[str, float]]:
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        [sys.executable, "bench/bench_runs.py", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_runs.py failed in {tree}:\n{done.stdout[-2000:]}{done.stderr}")
    return summary(done.stdout)


def spread(values: list[float]) -> str:
    middle = statistics.median(values)
    places = 0 if middle >= 100 else 1 if middle >= 10 else 2
    return f"{middle:,.{places}f} [{min(values):,.{places}f}–{max(values):,.{places}f}]"


def report(sides: dict[str, list[dict[str, dict[str, float]]]]) -> None:
    before, after = sides["before"], sides["after"]
    for workload in before[0]:
        print(f"\n{workload}")
        for label, (column, unit, lower_better) in FIGURES.items():
            b = [run[workload][column] for run in before if column in run.get(workload, {})]
            a = [run[workload][column] for run in after if column in run.get(workload, {})]
            if not b or not a:
                continue
            change = statistics.median(a) / statistics.median(b) - 1
            worse = change > 0 if lower_better else change < 0
            print(
                f"  {label:<10}{unit:>3}  before {spread(b):<26} after {spread(a):<26} "
                f"{change:+.1%}{' (worse)' if worse and abs(change) > 0.005 else ''}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", required=True, help="the commit measured first in a pair")
    parser.add_argument("--after", default="HEAD", help="the commit measured second (HEAD)")
    parser.add_argument("--pairs", type=int, default=5, help="how many pairs (5)")
    parser.add_argument("bench_args", nargs="*", help="arguments of bench_runs.py")
    args = parser.parse_args()
    bench_args = args.bench_args or DEFAULT_ARGS
    sides: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="toolgate-ab-") as folder:
        trees = {side: Path(folder) / side for side in sides}
        for side, rev in (("before", args.before), ("after", args.after)):
            git = ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(trees[side]), rev]
            subprocess.run(git, check=True, capture_output=True)
        try:
            for pair in range(1, args.pairs + 1):
                for side in sides:
                    figures = measure(trees[side], bench_args)
                    sides[side].append(figures)
                    cells = {w: (f.get("p50"), f.get("steps_s")) for w, f in figures.items()}
                    print(f"pair {pair} {side:<6} (p50 ms, steps/s): {cells}", flush=True)
        finally:
            for tree in trees.values():
                remove = ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)]
                subprocess.run(remove, check=False, capture_output=True)
    print(f"\n== {args.pairs} pairs: {args.before} (before) against {args.after} (after)")
    report(sides)


if __name__ == "__main__":
    main()
