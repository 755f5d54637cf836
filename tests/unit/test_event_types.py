"""Every event type the code emits is one of the documented `EventType`s (the API's enum),
and every documented one is emitted somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from app.domain.events import EventType

APP = Path(__file__).resolve().parents[2] / "app"
LITERAL = re.compile(r'"((?:run|turn|call|preview|final|sources|step)\.[a-z_]+)"')
#: Column references that look like event types (foreign keys, SQL).
NOT_EVENTS = {"run.id", "run.tenant_id", "turn.run_id", "turn.step", "turn.tenant_id"}
#: Built from a status at run time: f"preview.{status}".
FORMED = {"preview.expired", "preview.committed"}


def test_the_code_emits_only_documented_event_types_and_all_of_them() -> None:
    found = {
        match
        for path in APP.rglob("*.py")
        if path.name != "events.py"
        for match in LITERAL.findall(path.read_text())
    } - NOT_EVENTS
    documented = {t.value for t in EventType}
    assert found <= documented, found - documented
    assert documented <= found | FORMED, documented - found - FORMED
