"""The clients as written, for asyncio; `_sync` is made from them (make_sync.py)."""
