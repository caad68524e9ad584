"""Helpers for the tests, not tests themselves: brute-force references, the loss table, the
bad-argument probe, JSON Schemas, shared fixtures and the stubtest settings."""
