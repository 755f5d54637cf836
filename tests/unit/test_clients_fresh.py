"""The clients' generated parts are what `make openapi` makes from the committed OpenAPI
document: generated again into a temporary folder, they must equal the committed files
(else run `make openapi`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _stale(made: Path, parts: list[str]) -> list[str]:
    differ = []
    for part in parts:
        fresh, committed = _tree(made / part), _tree(ROOT / part)
        names = fresh.keys() | committed.keys()
        differ += [f"{part}/{n}" for n in names if fresh.get(n) != committed.get(n)]
    return sorted(differ)


def test_the_python_clients_generated_parts_are_fresh(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(ROOT / "scripts" / "generate-python-client"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    package = "clients/python/toolgate_client"
    assert _stale(tmp_path, [f"{package}/generated", f"{package}/_sync"]) == []


def test_the_typescript_clients_types_and_build_are_fresh(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(ROOT / "scripts" / "generate-typescript-client"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "clients/typescript/dist/index.js").exists()
    assert _stale(tmp_path, ["clients/typescript/src", "clients/typescript/dist"]) == []
