"""The Python API: the estimator, scikit-learn integration, model selection, baselines,
progress reports, the module layout, typing and packaging."""
