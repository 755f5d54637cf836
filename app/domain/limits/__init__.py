"""What a run may spend and keep: budgets, a tenant's quotas, child runs' shares (lineage),
retention."""
