"""Use cases that make runs: create (child runs, continuations and delegated runs too), birth in
the commit batch, checks on text entering a run."""
