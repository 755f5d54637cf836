"""A run's steps: deciding, calling the model, executing calls, settling and committing them."""
