"""The IR tooling: TREC runs and trec_eval, fusion, the evaluation protocol and experiments,
exports, plots, the command line, PyTerrier, benchmark scripts and the documentation."""
