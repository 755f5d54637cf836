"""`python -m app audit verify [--tenant T]`: every tenant's audit chain (or one) walked
against its hashes and its head; one JSON line per chain, then exit 0 when every chain
holds (a tenant with no entries has nothing to break), 1 when one does not (its first
entry that does not match is named)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from app.engine.audit.trail import Verdict


def report(verdicts: Sequence[Verdict], tenant: str | None) -> int:
    if tenant is not None and all(v.entries == 0 and v.broken is None for v in verdicts):
        print(f"note: tenant {tenant!r} has no audit entries", file=sys.stderr)
    broken = False
    for verdict in verdicts:
        line: dict[str, object] = {"tenant": verdict.tenant_id, "entries": verdict.entries}
        if verdict.broken is None:
            line["holds"] = True
        else:
            broken = True
            line.update(holds=False, seq=verdict.broken.seq, why=verdict.broken.why)
            print(
                f"the audit chain of tenant {verdict.tenant_id!r} does not hold at entry "
                f"{verdict.broken.seq}: {verdict.broken.why}",
                file=sys.stderr,
            )
        print(json.dumps(line))
    return 1 if broken else 0
