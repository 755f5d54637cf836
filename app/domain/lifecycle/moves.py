"""Every kind of status change the service makes, declared once against the transition
tables (`domain.lifecycle.status.move` refuses an edge a table lacks, at import). The statements
that change a status take their `WHERE status IN (…)` guard and the status they write
from here; the domain code that moves a call or a preview checks its move here before
any SQL is built. A new edge is a row in its table plus the move that makes it.
"""

from __future__ import annotations

from app.domain.lifecycle.status import (
    ACTIVE_RUN_STATUSES,
    RUN_TRANSITIONS,
    CallStatus,
    PreviewStatus,
    RunStatus,
    move,
)

R, C, P = RunStatus, CallStatus, PreviewStatus

# -- runs -------------------------------------------------------------------------------
#: A process takes the lease of an active run nobody holds (`db.lifecycle.leases`).
RUN_CLAIM = move("run", "claim", ACTIVE_RUN_STATUSES, {R.RUNNING})
#: A lease holder's step write (`db.lifecycle.step_writes`): the run goes on, parks or finishes.
RUN_STEP = move("run", "step", {R.RUNNING}, RUN_TRANSITIONS[R.RUNNING])
#: A parked run made runnable again: a rejection, the claim (or refusal) of a commit,
#: the sweep of an expired preview or deadline, a cancel (`db.approvals.decisions`,
#: `db.lifecycle.runs`).
RUN_WAKE = move("run", "wake", {R.AWAITING_APPROVAL}, {R.RUNNING})
#: A decision that changes nothing of the run's status but its timeline (an approval):
#: only a parked run takes one.
RUN_PARKED = RUN_WAKE.sources
#: A cancel request is taken by any run not finished (`db.lifecycle.runs`).
RUN_UNFINISHED = frozenset(s for s, targets in RUN_TRANSITIONS.items() if targets)

# -- calls ------------------------------------------------------------------------------
#: A proposal refused at validation is stored already rejected (`engine.steps.turn_writes`).
CALL_PROPOSAL_REJECTED = move("call", "proposal_rejected", {C.PENDING}, {C.REJECTED})
#: An attempt starts: a first one, an approved call's, a retry or a recovery.
CALL_START = move("call", "start", {C.PENDING, C.APPROVED, C.EXECUTING}, {C.EXECUTING})
#: A call that needs approval parks on a preview (again, after a version conflict).
CALL_PARK = move("call", "park", {C.PENDING, C.EXECUTING}, {C.AWAITING_APPROVAL})
#: An approver's decisions on its preview (`db.approvals.decisions`).
CALL_APPROVE = move("call", "approve", {C.AWAITING_APPROVAL}, {C.APPROVED})
CALL_REJECT = move("call", "reject", {C.AWAITING_APPROVAL}, {C.REJECTED})
#: An approver revised its arguments: it awaits a decision on a new preview.
CALL_REVISE = move("call", "revise", {C.AWAITING_APPROVAL}, {C.AWAITING_APPROVAL})
#: A commit its gates refuse: the approved call fails with the gate's code.
CALL_REFUSE_COMMIT = move("call", "refuse_commit", {C.APPROVED}, {C.FAILED})
#: The outcomes of `domain.lifecycle.settle` (the round, the finish).
CALL_SUCCEED = move("call", "succeed", {C.EXECUTING}, {C.SUCCEEDED})
CALL_FAIL = move(
    "call", "fail", {C.PENDING, C.AWAITING_APPROVAL, C.APPROVED, C.EXECUTING}, {C.FAILED}
)
CALL_CANCEL = move(
    "call", "cancel", {C.PENDING, C.AWAITING_APPROVAL, C.APPROVED, C.EXECUTING}, {C.CANCELLED}
)
CALL_EXPIRE = move("call", "expire", {C.AWAITING_APPROVAL, C.APPROVED}, {C.REJECTED})

# -- previews ---------------------------------------------------------------------------
PREVIEW_APPROVE = move("preview", "approve", {P.PENDING}, {P.APPROVED})
PREVIEW_REJECT = move("preview", "reject", {P.PENDING}, {P.REJECTED})
#: An approver revised the call's arguments: a new preview replaces it.
PREVIEW_REVISE = move("preview", "revise", {P.PENDING}, {P.SUPERSEDED})
#: Its call settled: committed (a claimed commit that was sent), or expired unused (also
#: by a refused commit, or the clock).
PREVIEW_COMMIT = move("preview", "commit", {P.APPROVED}, {P.COMMITTED})
PREVIEW_EXPIRE = move("preview", "expire", {P.PENDING, P.APPROVED}, {P.EXPIRED})
#: A commit its gates refuse: the approved preview expires unused.
PREVIEW_REFUSE_COMMIT = move("preview", "refuse_commit", {P.APPROVED}, {P.EXPIRED})
#: The backend refused an approved call: its resource changed since the preview.
PREVIEW_SUPERSEDE = move("preview", "supersede", {P.APPROVED}, {P.SUPERSEDED})

#: Edges the tables allow that no code makes yet, and why (the coverage test reads this).
UNMADE = {
    # A queued or parked run is made runnable and claimed before anything ends it (a
    # cancel, a deadline included): it finishes from `running`. The contract allows the
    # edges; nothing takes them today.
    ("run", R.QUEUED, R.FINISHED),
    ("run", R.AWAITING_APPROVAL, R.FINISHED),
}
