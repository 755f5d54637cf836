"""Use cases: the only code that opens transactions and calls ports, and the runner that
advances runs."""
