"""The demo technology radar: its rows and their history."""
