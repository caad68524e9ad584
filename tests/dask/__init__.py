"""Distributed training on Dask clusters."""
