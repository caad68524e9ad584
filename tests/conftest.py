"""The suite's shared fixtures, which live in tests/_support/fixtures.py with the other helpers."""

pytest_plugins = ["tests._support.fixtures"]
