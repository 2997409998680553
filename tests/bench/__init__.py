"""Test and bench workload generators (test data, not product code)."""
