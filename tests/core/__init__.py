"""The core: solver, oracles and losses, metrics, binning, configuration, determinism, numerical
robustness and scale."""
