"""docs/mcp.md's walk-through, as a reader runs it: its MCP server (`kb_server.py`, the
document's Python block) and a Toolgate server on its config (the document's config block)
are started on free ports, then the document's shell blocks run in order and every sample
output is checked against what its command printed."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.dbserver import fresh_database
from tests.support.doc_blocks import ROOT, blocks
from tests.support.doc_shell import Shell, walk
from tests.support.processes import free_port, server, wait_healthy_sync

DOCUMENT = ROOT / "docs" / "mcp.md"
DOCUMENTED_PORT = "9200"


def _block(lang: str, kind: str) -> str:
    [found] = [b for b in blocks(DOCUMENT) if b.lang == lang and b.kind == kind]
    return found.text


def _listening(port: int, timeout_s: float = 30) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def test_the_mcp_walk_through(db_server: tuple[str, str]) -> None:
    kb_port = str(free_port())
    with fresh_database(db_server[1]) as url, tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        (where / ".venv").symlink_to(Path(sys.prefix))
        (where / "kb_server.py").write_text(
            _block("python", "other").replace(DOCUMENTED_PORT, kb_port)
        )
        (where / "kb.yaml").write_text(_block("yaml", "config").replace(DOCUMENTED_PORT, kb_port))
        env = {"TOOLGATE_DATABASE_URL": url, "TOOLGATE_CONFIG": str(where / "kb.yaml")}
        migrated = subprocess.run(
            [sys.executable, "-m", "app", "db", "upgrade"],
            env={**env, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            timeout=120,
        )
        assert migrated.returncode == 0, migrated.stderr
        kb = subprocess.Popen(
            [sys.executable, "kb_server.py"],
            cwd=where,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _listening(int(kb_port))
            port = free_port()
            with server(["serve", "--port", str(port)], env, cwd=where):
                origin = f"http://127.0.0.1:{port}"
                wait_healthy_sync(origin, timeout_s=90)
                assert walk(DOCUMENT, Shell(where, origin, env)) == 3
        finally:
            kb.terminate()
            kb.wait(timeout=10)
