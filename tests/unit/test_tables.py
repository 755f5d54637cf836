"""The schema's distribution rule: tenant_id leads every key and index (ARCHITECTURE),
with exactly the documented exceptions."""

from __future__ import annotations

from sqlalchemy import Index, PrimaryKeyConstraint, UniqueConstraint

from app.db.tables import metadata

#: Lookups where the tenant is not known, or spans tenants: key hash, a console session's
#: cookie hash, driver queue, purges (expired keys, finished runs, ended sessions), the
#: sweep of expired approvals, and the webhook senders' queue.
EXCEPTIONS = {
    "uq_api_key_key_hash",
    "pk_console_session",
    "ix_console_session_expires_at",
    "ix_run_claimable",
    "ix_idempotency_key_expires",
    "ix_run_awaiting_deadline",
    "ix_preview_open_expiry",
    "ix_webhook_delivery_due",
    "ix_run_finished_at",
    "ix_webhook_delivery_done",
}
#: Tables of no tenant: config versions are the operator's, shared by every tenant's runs;
#: so are the pinned declarations of the operator's MCP tools, and the processes serving;
#: a console sign-in under way belongs to nobody known yet.
TENANTLESS = {"config_version", "mcp_declaration", "process", "console_login"}


def test_tenant_id_leads_every_key_and_index_but_the_documented_exceptions() -> None:
    leaders: dict[str, str] = {}
    for table in metadata.sorted_tables:
        if table.name in TENANTLESS:
            assert "tenant_id" not in table.c, table.name
            continue
        for constraint in table.constraints:
            if isinstance(constraint, PrimaryKeyConstraint | UniqueConstraint):
                name = str(constraint.name or f"pk_{table.name}")
                leaders[name] = list(constraint.columns)[0].name
        for index in table.indexes:
            assert isinstance(index, Index)
            leaders[str(index.name)] = list(index.expressions)[0].name
    not_led = {name for name, first in leaders.items() if first != "tenant_id"}
    assert not_led == EXCEPTIONS
