"""Running a document's shell blocks as a reader would: one after the other, in a folder
laid out like the repository after `make run` (`.venv`, `.data/demo-key.json`), variables
set by one block there for the next.

What the harness changes, and only that: the service's address (`http://127.0.0.1:8000`,
what `make run` serves) becomes the test server's, and `curl` fails on an HTTP error status
(`--fail-with-body`) unless the block is marked `run-any-status`. Each block runs in
`bash` with `set -euo pipefail`, so a failed command, a failed pipe or a variable nobody
set fails the block.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.doc_blocks import SHELL, Block, blocks
from tests.support.doc_shapes import differences, last_json, parse_sample

DOCUMENTED_ORIGINS = ("http://127.0.0.1:8000", "http://localhost:8000")
#: `NAME=...` or `export NAME=...` at the start of a line: a variable the reader sets.
_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=", re.MULTILINE)
_FAIL_ON_ERRORS = 'curl() { command curl --fail-with-body "$@"; }\n'


@dataclass
class Shell:
    """One reader's shell: `folder` is where they stand, `origin` the server's address."""

    folder: Path
    origin: str
    env: dict[str, str]
    #: Variables of the test's environment the reader does not have.
    unset: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.state = self.folder / ".doc-shell-state"
        self.state.write_text("")

    def run(self, block: Block, timeout_s: float = 90) -> str:
        """The block's standard output; AssertionError naming the block when it fails."""
        text = block.text
        for documented in DOCUMENTED_ORIGINS:
            text = text.replace(documented, self.origin)
        names = sorted(set(_ASSIGNMENT.findall(text)))
        keep = "".join(
            f"declare -p {name} >> {shlex.quote(str(self.state))} 2>/dev/null || true\n"
            for name in names
        )
        script = (
            "set -euo pipefail\n"
            f"source {shlex.quote(str(self.state))}\n"
            + ("" if block.kind == "run-any-status" else _FAIL_ON_ERRORS)
            + text
            + keep
        )
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.folder,
            env={**{k: v for k, v in os.environ.items() if k not in self.unset}, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{block.where} failed (exit {done.returncode}):\n{block.text}\n"
                f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
            )
        return done.stdout


def walk(document: Path, shell: Shell) -> int:
    """Runs the document's blocks in order, each sample output checked against what the
    command before it printed; how many samples were checked."""
    printed: str | None = None  # what the last block run printed, for the sample after it
    checked = 0
    for block in blocks(document):
        if block.kind in ("run", "run-any-status"):
            printed = shell.run(block)
        elif block.lang in SHELL:
            printed = None  # a sample after a block not run shows nothing we have
        elif block.kind == "output":
            assert printed is not None, f"{block.where}: a sample output after no command run"
            found = differences(parse_sample(block.text), last_json(printed))
            assert found == [], f"{block.where}: the sample is not what the command printed:\n" + (
                "\n".join(found) + f"\n--- printed\n{printed[-3000:]}"
            )
            checked += 1
    return checked
