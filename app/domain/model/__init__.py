"""What goes to a model and what comes back: replies, the context and its window, paging of large
results, carry-over, typed output, routing, citations."""
