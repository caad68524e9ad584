"""Private: one fit of a model, below the estimators, the Dask estimator and ``svmmap learn``.

- `training`: the one training routine (checks, the solve, fitted attributes, warnings);
- `evaluation_sets`, `convergence`, `degenerate`, `latent`, `once`: what a fit measures and says
  along the way (validation sets and early stopping, why it stopped, models that rank nothing,
  the latent losses' rounds, warnings said once per search);
- `fitted`, `pairs`: the fitted preprocessing as plain data, and the choice of GA2M pairs.

This file imports none of them: importing one of its modules runs this file first, so an
import here would make every module of the package depend on every other.
"""
