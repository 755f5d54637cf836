# Made from toolgate_client/_async/__init__.py by clients/python/make_sync.py
# (make openapi); edit that file, not this one.
"""The clients as written, for asyncio; `_sync` is made from them (make_sync.py)."""
