"""Events after they are committed: waking streams, reading feeds, hearing other processes."""
