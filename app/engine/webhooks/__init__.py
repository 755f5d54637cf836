"""An admin's webhook endpoints, and the sender that delivers events."""
