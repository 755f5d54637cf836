"""Wire models: runs, the catalog, keys, webhooks, script items."""
