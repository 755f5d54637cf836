"""Pure rules of Toolgate: no FastAPI, SQLAlchemy or httpx here (a test enforces it)."""
