"""Robustness: bad input and arguments, panics, interrupts, memory limits, and inputs never
overwritten."""
