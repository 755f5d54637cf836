"""Previews of calls that need approval, and decisions on them."""
