"""Private: the one model search of `svmmap.SVMMapCV`.

The C search alone is this search with one candidate (the estimator's loss, the features as
given). The layers, each taking plain values and none the estimator:

- `candidates`: which losses and preprocessings a search tries, and their transformers;
- `splits`: the (train, validation) rows of each split, and each split's data as the core
  takes it, prepared once per preprocessing and split when first needed;
- `engine`: the fits, warm-started along C, with the early stop along C, the time budget,
  candidates that cannot run left out, confirmation by cold fits and progress lines;
- `results`: the one selection rule and the one ``cv_results_`` builder.

This file imports none of them: importing one of its modules runs this file first, so an
import here would make every module of the package depend on every other.
"""
