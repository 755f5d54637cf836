"""Webhook endpoints, their deliveries (the outbox) and the senders' claims."""
