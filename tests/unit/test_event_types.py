"""Every event type the code emits is one of the documented `EventType`s (the API's enum),
and every documented one is emitted somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from app.domain.lifecycle.events import EventType

APP = Path(__file__).resolve().parents[2] / "app"
LITERAL = re.compile(r'"((?:run|turn|call|preview|final|sources|step)\.[a-z_]+)"')
#: Types named through the enum (`EventType.CALL_FAILED`), as typed changes name them.
MEMBER = re.compile(r"\bEventType\.([A-Z_]+)\b")
#: Column references that look like event types (foreign keys, SQL).
NOT_EVENTS = {"run.id", "run.tenant_id", "turn.run_id", "turn.step", "turn.tenant_id"}
#: Built from a status at run time: f"preview.{status}".
FORMED = {"preview.expired", "preview.committed", "preview.rejected"}


def test_the_code_emits_only_documented_event_types_and_all_of_them() -> None:
    sources = [p.read_text() for p in APP.rglob("*.py") if p.name != "events.py"]
    found = {match for text in sources for match in LITERAL.findall(text)} - NOT_EVENTS
    found |= {EventType[name].value for text in sources for name in MEMBER.findall(text)}
    documented = {t.value for t in EventType}
    assert found <= documented, found - documented
    assert documented <= found | FORMED, documented - found - FORMED
