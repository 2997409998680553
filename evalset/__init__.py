"""evalset."""
