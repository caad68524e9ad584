"""Choosing C: `SVMMapCV` fits a path of C values per split, each C warm-started from
the one before, and keeps the C with the best validation score."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, List, Mapping, Optional, Sequence, Union

import numpy as np
from sklearn.base import BaseEstimator

from ._fit.defaults import SEARCH_DEFAULTS, TRAINING_DEFAULTS
from ._fit.evaluation_sets import check_eval_feature_names, refuse_single_fit_arguments
from ._fit.latent import refuse_latent_options
from ._fit.request import FitRequest, fit_doc
from ._fit.training import TRAINING_PARAMETERS, check_inputs, fitting
from ._fit.watch import lightgbm_eval_set, lightgbm_names
from ._search.candidates import auto_losses, make_preprocessor, preprocessing_names
from ._search.checks import check_params, check_search_params, refuse_search_only_params
from ._search.engine import RANKING_EPS, Policy, candidate_list, pair_scale, run
from ._search.folds import QueryKFold
from ._search.refit import refit_chosen
from ._search.scoring import QueryMeanScorer
from ._search.size import limit_training_queries
from ._search.splits import SplitData, make_splits, validation_split
from ._typing import Slack
from ._validation import (
    check_qid,
    n_threads,
)
from .estimator import SVMMap, _RefusesLightGBMParameters, query_mean

__all__ = ["SVMMapCV", "QueryKFold", "DEFAULT_CS"]

#: The C grid of ``SVMMapCV`` (the table of defaults, `svmmap._fit.defaults`).
DEFAULT_CS = SEARCH_DEFAULTS["Cs"]


class SVMMapCV(BaseEstimator, _RefusesLightGBMParameters):
    """`SVMMap` with C chosen by query-grouped cross-validation or on a
    validation set, fitting each split's C values as one warm-started path.

    In each split, the C values are fitted from the smallest to the largest, each starting
    from the previous one's final working set and iterate: the cutting planes of a solve at C
    remain valid lower bounds of the risk at any other C and its dual variables, scaled by
    C'/C, remain feasible, so the solve at C' stops on the same certificate as a cold fit
    (duality gap at most ``C' * eps``) in fewer oracle passes. Each model on the path is thus
    within the solver's tolerance of the independent fit at that C (see the guide page
    "Choosing C" for the figures).

    The chosen C is the smallest C whose mean validation score is within ``score_tolerance``
    of the best mean score (with the default 0, the best score, ties going to the smaller C).

    LightGBM's constructor parameters (``n_estimators``, ``learning_rate``, ``num_leaves`` ...)
    are refused as `SVMMap` refuses them, every one given in one TypeError naming its
    counterpart (the grid ``Cs`` where `SVMMap` has ``C``).

    Two models that both stop on the certificate can differ in validation score by a little
    (up to 0.008 MAP between warm and cold fits on whole MQ2008 folds at eps=1e-3, 0.015 on
    150 of its queries), and values of C whose scores are that close are chosen by chance,
    by warm starts and independent fits alike. With ``confirm_tolerance`` set, the C values
    whose warm-path mean score is within it of the best are fitted again from scratch on
    every split (exactly the fits of an independent loop over C) and the choice is made on
    those scores: the chosen C is then the one independent fits choose whenever warm and cold
    scores differ by less than ``confirm_tolerance``, at the cost of those cold fits (on
    MQ2008, where every C lies within 0.02 of the best, 1.4 times the oracle passes of the
    independent fits themselves).

    With ``refit=True`` an `SVMMap` at that C is then fitted on all the
    training data (a cold fit, so that ``best_estimator_`` is exactly
    ``SVMMap(C=best_C_, ...).fit(X, y, qid=qid)``).

    Parameters
    ----------
    Cs : sequence of float, default=(0.01, 0.1, 1, 10, 100, 1000)
        The C values to try (finite, > 0, distinct; any order, fitted in ascending order).
    cv : int, cross-validation splitter, iterable of (train, test) index arrays, or "validation", default=5
        An integer k: ``QueryKFold(k)``, svmmap's own k folds of whole queries (the distinct
        query ids in sorted order cut into k consecutive blocks; the same folds with every
        scikit-learn version, so no query is split between training and validation and the
        chosen C does not depend on the installed scikit-learn). A splitter (e.g.
        ``QueryKFold(k, shuffle=True, random_state=0)``): its ``split(X, y, groups=qid)`` is used. "validation": train on all of ``X`` (in the search:
        at most ``max_train_queries`` of its queries) and score on the one ``eval_set`` given to
        ``fit``. A split that puts rows of one query both in
        training and in validation is refused, naming the query, as is a split whose rows are
        not distinct integer row indices 0 <= i < n (a boolean mask, a negative or float
        index, a row listed twice).
    scoring : str, default="ndcg@10"
        The validation metric, a name of ``svmmap.metrics.evaluate`` ("ndcg@10", "map", ...),
        averaged over the validation queries where it is defined (weighted by
        ``sample_weight`` when given). A split with no such query (e.g. none with a relevant
        document) is left out of the mean over splits, with a warning; with none left, ``fit``
        raises ValueError rather than choose C on NaN.
    score_tolerance : float, default=0.0
        Mean scores within this much of the best count as ties (see above).
    warm_start : bool, default=True
        Fit each split's C values as a warm-started path; False fits every C from scratch
        (the same models up to the solver's tolerance, for comparison).
    confirm_tolerance : float or None, default=None
        With ``warm_start``, the C values whose mean warm-path score is within this much of the
        best (plus ``score_tolerance``) are refitted from scratch on every split and chosen
        among on those scores (see above); when only one C is that close, it is chosen
        without refitting. None (the default) trusts the warm path's scores: the fastest,
        and the choice of independent fits whenever one C wins by more than the solver's
        noise. 0.02 reproduces the independent fits' choice among near-ties as well. When
        ``time_budget`` runs out before the cold fits are done, they are left out (with a
        warning) and the warm path's scores choose.
    refit : bool, default=True
        Fit the chosen C on all the training data (``best_estimator_``, ``coef_``,
        ``predict`` and ``score``).
    preprocessing : None, "auto", {"none", "standard", "binned", "ga2m"} or list of them, default=None
        The feature preprocessings to search: "none" (the features as given), "standard"
        (scikit-learn's ``StandardScaler``; without centering on sparse X), "binned"
        (`svmmap.Binner`, Yue et al.'s threshold indicators) and "ga2m" (the binned
        indicators with up to 10 pairwise interactions, ``Binner(interactions=10)``, whose
        pairs are chosen on each split's training queries and kept only where they reduce
        the residual on queries that did not choose them: the other half of the training
        queries, or with ``cv="validation"`` the queries of ``eval_set``, as
        ``Binner.fit(eval_set=...)`` does); "auto" tries all four. Each is
        fitted on the training rows of each split only, and on all of X for the refit. When
        "ga2m" keeps no pair on any split and "binned" is searched with the same loss, its
        rows are not fitted (status "no pairs": they would be "binned"'s models), so that on
        data without interactions it costs its pair selections alone. None (the default) is
        today's C search on the features as given.
    losses : list of loss specifications or None, default=None
        With ``loss="auto"``: the losses to search, each one value of ``loss`` (so
        ``["map", ["map", "ndcg@10"]]`` searches map alone and the combination of map and
        ndcg@10 as two candidates). None searches map, pairwise, pairwise:count and the
        graded NDCG loss at the cutoff of ``scoring`` (ndcg@10:graded for "ndcg@10";
        ndcg:graded for a metric without a cutoff). Given with any other ``loss``, it is an
        error: a list given as ``loss`` is one combined loss, never a search. In that default
        list, pairwise:count's C values are the grid's times 4 / M (M the mean number of
        pairs with different labels per query): it sums its hinge over pairs where pairwise
        averages it, so that it is then on the other losses' scale of C (pairwise weighted
        by each query's pairs) rather than M / 4 times less regularized, where its fits are
        the slowest of the search and rarely chosen. ``cv_results_`` shows the C values used.
        A loss listed twice, in any spelling that trains the same model (``["map", "map"]``,
        ``["map", "1*map"]``), is refused rather than fitted twice.
    patience : int or None, default=1
        In the search (``loss="auto"`` or a ``preprocessing``): a (loss, preprocessing) pair's
        C path, fitted from the smallest C up, stops after this many consecutive C values
        whose mean validation score does not exceed the best of the smaller ones, so that the
        slow large-C fits are made only where they still help; the C values left out are
        listed with status "early stop". None fits every C. The C search alone fits every C on
        every split: there a value other than the default and None is refused.
        The default 1 stops a path at its first C that does not improve: on MQ2008's five
        folds it chose the same candidate as 2 in every fold, with 5 splits and with the
        vali split, in fewer fits (benchmarks/auto_search.py counts them); a larger value
        tolerates a validation curve that dips before it rises, at the cost of more fits.
    time_budget : float or None, default=None
        Seconds for the whole search (the C search alone included). The fit under way when
        they are spent stops there (its ``max_time`` is cut to the budget left; it keeps its
        iterate and its split score, with the stop reason "budget"), no further fit is
        started, the rows left (and a row whose fit the budget cut) are listed with status
        "time budget", a warning says so, and the best of the fully fitted rows is chosen.
        A "ga2m" candidate's pair selection on a split (seconds on large data) stops at the
        budget too: that split of its row has the stop reason "budget" without a fit or a
        score, and its note says how far the selection came. The first candidate (first
        loss and preprocessing, smallest C) is always fitted on every split (its fits capped
        like any other once the budget is spent, its pairs chosen in full), so there is
        always a result; when the data refuses it (status "failed"), the next candidate
        that runs takes its place. The refit has the budget as its ``max_time`` (unless its
        own is smaller), so that ``fit`` returns within about twice the budget; a refit
        stopped there keeps its best iterate, with a warning. None: no limit.
    prune_margin : float or None, default=0.02
        In the search (not the C search alone): the race across candidates. At each C the
        candidates are fitted split by split; from the second split on, a candidate whose
        mean validation score over the splits fitted so far is below the best such mean of
        any candidate (at this C or a smaller one) by more than this margin stops there, its
        row and the larger C values listed with status "pruned". Candidates are compared on
        the same splits, so what one split's queries favour is shared. On MQ2008's five folds
        and two generated kinds of data (benchmarks/auto_search.py) 0.02 chose what the full
        search chose in 2 to 5 times less time. A candidate whose fits at this C took more
        than 5 times the median iterations of the candidates fitted on the same splits, and
        whose mean is below the best by any amount, stops from the first split on (on
        raw-scale features, the unscaled candidates; benchmarks/race_cost.py). With one
        split (``cv="validation"``) the race runs after each C's split, before the next C:
        a candidate below the best row so far by more than this margin, or slow and below
        it, is fitted at no larger C (its fitted rows stay, the later ones are "pruned").
        A row whose model ranks nothing on a split so far (w = 0) is not judged: its score
        is its ties' order. None: every candidate is fitted on every split. The C search alone has one candidate
        and no race: there a value other than the default and None is refused.
    max_train_queries : int or None, default=500
        In the search (not the C search alone): the large-data rule. A split whose training
        part has more queries than this trains on this many of them, evenly spread over its
        training queries in the order of their ids (those at positions ``floor(i * m / max)``
        of its m training queries), and scores on all its validation queries; the refit
        trains on all of X. Splits only rank the candidates, and C multiplies the mean loss
        over queries, so a C means the same per query at any number of queries. On data with
        at most this many training queries per split (MQ2008's folds, about 380 of 470 queries
        in 5 folds) nothing changes; at the 573k-document shape of
        ``benchmarks/search_memory.py`` (3,840 training queries per split) each fit of the
        search trains on 7.7 times fewer documents. ``cv_results_``'s
        "split{k}_train_queries" gives what each row was fitted on. None: every split trains
        on all its training queries.
    verbose : int, default=0
        1: a line on stderr per candidate and C fitted on every split (fits done of those
        left at most, its mean score, the best so far, the time spent and an estimate of the
        time left) and per candidate left out (by the race, for want of pairs, refused on
        the data or stopped early along C) and when the time budget is spent; 2: a line per
        split as well. 0 (or LightGBM's -1): silent.
    loss, slack, eps, max_iter, relevance_threshold, n_jobs, cut_blocks, n_iter_no_change, max_time
        As in `SVMMap`.

    Notes
    -----
    The search over loss x preprocessing x C runs when ``loss="auto"`` or ``preprocessing``
    is given. The C values are visited in ascending order and, at each, every (loss,
    preprocessing) path not yet stopped is fitted on every split, warm-started from its own
    model at the C before (bit for bit the path ``warm_start`` fits), before the next C: with
    a time budget every pair thus gets its cheap small-C fits first. The chosen candidate has
    the best mean validation score (ties: the earlier loss in the list, then preprocessing in
    the order none, standard, binned as given, then the smaller C), among those whose model
    ranks on every validation split when there are any. ``warm_start=False`` and
    ``confirm_tolerance`` are not available in the search.

    The search's fits only rank the candidates, and the chosen one is fitted again at the
    ``eps`` given (the refit): they stop at 10 times ``eps``, and those of "pairwise:count" on
    the other losses' scale of C (see ``losses``) at the duality gap that "pairwise" would
    reach at the nominal C, 4 C ``eps`` in its units, rather than M times tighter (M its mean
    pairs per query). On the raw-scale kind of benchmarks/auto_search.py this took the search
    from 47.5 to 29.0 CPU seconds, with test NDCG@10 within 0.003 of the search before on
    every kind of data there. The C search alone fits at the ``eps`` given.

    Attributes
    ----------
    best_C_ : float
        The chosen C.
    best_params_ : dict
        The chosen candidate: {"loss": ..., "preprocessing": ..., "C": ...} ("preprocessing"
        is "none" outside the search).
    best_index_ : int
        Its row in ``cv_results_``.
    search_seconds_ : float
        Wall-clock seconds of the search (without the refit).
    refit_time_ : float
        Wall-clock seconds of the refit on all the data (with ``refit=True``), as in
        scikit-learn's ``GridSearchCV``.
    scorer_ : callable
        What scored the splits: ``scorer_(estimator, X, y, qid, sample_weight=None)`` is
        ``scoring`` of ``estimator.predict(X)``, averaged over the queries as ``score`` does.
    best_score_ : float
        Its mean validation score.
    cv_results_ : dict of ndarray
        Per C (in ascending order), as scikit-learn's search estimators: "param_C",
        "split{k}_test_score", "mean_test_score", "std_test_score", "rank_test_score",
        "mean_fit_time" (seconds of the solver per split), "mean_n_iter" (iterations) and
        "mean_n_evals" (oracle passes over the data) of the path, "confirmed" (whether the C
        was refitted from scratch; its scores are then the cold fits'), "cold_n_evals" (the
        passes of those refits, summed over the splits), "total_n_evals" (all passes at
        that C over the splits) and "n_degenerate_splits" (splits whose model ranks nothing
        on their validation data: w = 0, or scores tied within every validation query).
        In the search: one row per (loss, preprocessing, C), listed by loss, then
        preprocessing, then ascending C. Every search (the C search alone is one with a
        single candidate) has the same keys: "param_loss", "param_preprocessing",
        "param_C", "params", the split scores, "mean_test_score", "std_test_score",
        "rank_test_score", "mean_fit_time", "mean_n_iter", "mean_n_evals", per split
        "split{k}_fit_time", "split{k}_n_iter", "split{k}_stop_reason" (the solver's:
        "converged", "stalled", "max_iter", "max_time", or "budget" for a fit cut by
        ``time_budget``, or for a "ga2m" pair selection it cut, without a fit; "" where not
        fitted) and "split{k}_train_queries" (the number of
        training queries the row's fit on split k trained on, see ``max_train_queries``; 0
        where not fitted), "confirmed", "cold_n_evals",
        "total_n_evals", "n_degenerate_splits", "status" ("fitted", "early stop" (left out
        by ``patience``), "no pairs" (a "ga2m" candidate without pairs, see
        ``preprocessing``), "pruned" (left out by the race, see ``prune_margin``; the split
        scores fitted before are kept), "time budget" (left out, or not finished on every split, when
        ``time_budget`` was spent) or "failed" (the candidate's fit was refused on this
        data, e.g. an oracle that cannot run on a query that long, or a C too large for
        float64 arithmetic; the search goes on without it; also when the refit on all of X
        is refused, and the next best is refitted)) and "note" (why a row failed, was
        pruned or was cut by the budget during its pair selection). A row not fitted has NaN
        mean score and ranks after every fitted one. When every candidate fails, fit raises the first
        error.
    n_splits_ : int
        Number of splits.
    best_estimator_ : SVMMap or sklearn.pipeline.Pipeline
        The model refitted with ``best_params_`` on all the training data (with
        ``refit=True``): an `SVMMap`, or with a preprocessing a Pipeline of the scaler or
        Binner and the SVMMap (``svmmap.save_model`` writes either).
    coef_ : ndarray of shape (n_features,)
        The refitted SVMMap's ``coef_`` (with a preprocessing, over the preprocessed
        features).
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmmap import SVMMapCV
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([1, 0, 0, 1, 0, 0], 10)
    >>> X = rng.normal(size=(60, 3)) + np.outer(y, [1.0, 0.0, 0.0])
    >>> qid = np.repeat(np.arange(10), 6)
    >>> model = SVMMapCV(Cs=[0.1, 1.0, 10.0], cv=3).fit(X, y, qid=qid)
    >>> model.best_C_ in (0.1, 1.0, 10.0)
    True
    """

    def __init__(
        self,
        Cs: Sequence[float] = DEFAULT_CS,
        *,
        cv: Any = SEARCH_DEFAULTS["cv"],
        scoring: str = SEARCH_DEFAULTS["scoring"],
        score_tolerance: float = 0.0,
        warm_start: bool = True,
        confirm_tolerance: Optional[float] = None,
        refit: bool = True,
        preprocessing: Union[None, str, Sequence[str]] = None,
        losses: Optional[Sequence[Union[str, Sequence[str], Mapping[str, float]]]] = None,
        patience: Optional[int] = SEARCH_DEFAULTS["patience"],
        time_budget: Optional[float] = None,
        prune_margin: Optional[float] = SEARCH_DEFAULTS["prune_margin"],
        max_train_queries: Optional[int] = SEARCH_DEFAULTS["max_train_queries"],
        verbose: int = 0,
        loss: Union[str, Sequence[str], Mapping[str, float]] = TRAINING_DEFAULTS["loss"],
        slack: Slack = TRAINING_DEFAULTS["slack"],
        eps: float = TRAINING_DEFAULTS["eps"],
        max_iter: int = TRAINING_DEFAULTS["max_iter"],
        relevance_threshold: float = TRAINING_DEFAULTS["relevance_threshold"],
        n_jobs: Optional[int] = TRAINING_DEFAULTS["n_jobs"],
        cut_blocks: Optional[int] = TRAINING_DEFAULTS["cut_blocks"],
        n_iter_no_change: Optional[int] = TRAINING_DEFAULTS["n_iter_no_change"],
        max_time: Optional[float] = TRAINING_DEFAULTS["max_time"],
    ) -> None:
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.score_tolerance = score_tolerance
        self.warm_start = warm_start
        self.confirm_tolerance = confirm_tolerance
        self.refit = refit
        self.preprocessing = preprocessing
        self.losses = losses
        self.patience = patience
        self.time_budget = time_budget
        self.prune_margin = prune_margin
        self.max_train_queries = max_train_queries
        self.verbose = verbose
        self.loss = loss
        self.slack = slack
        self.eps = eps
        self.max_iter = max_iter
        self.relevance_threshold = relevance_threshold
        self.n_jobs = n_jobs
        self.cut_blocks = cut_blocks
        self.n_iter_no_change = n_iter_no_change
        self.max_time = max_time

    def _estimator(self, C: float) -> SVMMap:
        # Every training parameter of the core's table but C, which the search sets.
        params = {p["name"]: getattr(self, p["name"]) for p in TRAINING_PARAMETERS if p["name"] != "C"}
        return SVMMap(C=C, **params)

    def _searching(self) -> bool:
        """Whether fit searches loss x preprocessing x C rather than C alone."""
        if self.losses is not None and not (isinstance(self.loss, str) and self.loss == "auto"):
            raise ValueError(
                f'losses= lists the losses to search with loss="auto", got loss={self.loss!r}; a list given as '
                "loss is one combined loss"
            )
        return (isinstance(self.loss, str) and self.loss == "auto") or self.preprocessing is not None

    def _check_search_params(self) -> None:
        check_search_params(vars(self))

    def _refuse_search_only_params(self) -> None:
        refuse_search_only_params(vars(self))

    def _check_params(self) -> List[float]:
        """The C grid in ascending order; one-line errors for bad parameters."""
        return check_params(vars(self))

    def fit(
        self,
        X: Any,
        y: Any,
        qid: Any = None,
        *,
        group: Any = None,
        sample_weight: Any = None,
        eval_set: Optional[Sequence[tuple]] = None,
        eval_group: Optional[Sequence[Any]] = None,
        eval_qid: Optional[Sequence[Any]] = None,
        eval_X: Any = None,
        eval_y: Any = None,
        **lightgbm_kwargs: Any,
    ) -> "SVMMapCV":
        request = FitRequest.of(locals())
        # A failed fit must not leave the previous fit's choice and scores behind (issue 36).
        with fitting(self):
            refuse_single_fit_arguments(type(self).__name__, lightgbm_kwargs)
            grid = self._check_params()
            request.eval_set = lightgbm_eval_set(eval_set, eval_X, eval_y)
            # The validation set's errors name eval_X and eval_y when the user spelled it so.
            with lightgbm_names(eval_X):
                check_eval_feature_names(X, request.eval_set)
                self._fit(grid, request)
        return self

    fit.__doc__ = fit_doc(
        "Score every C of ``Cs`` on every split, choose C, and refit it on all of X.",
        "self : SVMMapCV",
        omit=("eval_metric", "eval_at", "early_stopping_rounds", "eval_names", "callbacks"),
        overrides={
            "sample_weight": (
                "array-like of shape (n_documents,), optional",
                """As in `svmmap.SVMMap.fit`: per document, constant within each query; it weights
                the training loss and the validation mean.""",
            ),
            "eval_set": (
                "list of one (X, y) tuple, optional",
                """With ``cv="validation"``: the validation set, with its queries in ``eval_qid`` or
                ``eval_group`` (as in `svmmap.SVMMap.fit`).""",
            ),
            "eval_X, eval_y": (
                "array-like, optional",
                """LightGBM 4.7's spelling of ``eval_set=[(eval_X, eval_y)]``, as in
                `svmmap.SVMMap.fit`.""",
            ),
            "**lightgbm_kwargs": (
                "",
                """LightGBM's ``fit`` arguments of a single model are refused with the search's way,
                unless they ask for nothing (None, LightGBM's defaults): ``eval_metric`` and
                ``eval_at`` (the search chooses by ``scoring``, which the message computes from them),
                ``early_stopping_rounds`` and ``callbacks`` (the search fits every C to its
                tolerance; ``patience``, ``prune_margin`` and ``time_budget`` save its time,
                ``verbose=1`` logs it and ``cv_results_`` records it), and the others as
                `svmmap.SVMMap.fit` refuses them.""",
            ),
        },
    )

    def _fit(self, grid: List[float], args: FitRequest) -> None:
        """fit: the one search (see the class Notes), then the refit of the chosen candidate."""
        searching = self._searching()
        if searching:
            self._check_search_params()
            losses = (
                (list(self.losses) if self.losses is not None else auto_losses(self.scoring))
                if isinstance(self.loss, str) and self.loss == "auto"
                else [self.loss]
            )
            preprocessings = preprocessing_names("none" if self.preprocessing is None else self.preprocessing)
        else:
            self._refuse_search_only_params()
            losses, preprocessings = [self.loss], ["none"]
        candidates = candidate_list(
            losses,
            preprocessings,
            lambda loss: self._estimator(grid[0]).set_params(loss=loss)._config(),
            searching,
            listed=self.losses is not None,
            refuse_latent=lambda: refuse_latent_options(self.loss, sample_weight=args.sample_weight, eval_set=None),
        )
        data = check_inputs(type(self).__name__, args.X, args.y, args.qid, args.group, args.sample_weight)
        if searching and self.losses is None and isinstance(self.loss, str) and self.loss == "auto":
            # The default list's pairwise:count on the other losses' scale of C (`pair_scale`).
            scale = pair_scale(data.labels, data.codes)
            candidates = [replace(c, C_scale=scale) if c.loss == "pairwise:count" else c for c in candidates]
        validation = validation_split(
            args.eval_set,
            args.eval_group,
            args.eval_qid,
            data.n_features,
            self.scoring,
            n_threads(self.n_jobs),
            self.relevance_threshold,
        )
        splits = make_splits(self.cv, data.n_rows, data.labels, data.codes, data.uniques, validation is not None)
        if searching:
            # The large-data rule (`limit_training_queries`): the C search alone trains on every split's rows.
            splits = limit_training_queries(splits, data.codes, self.max_train_queries)
        split_data = SplitData(
            args.X,
            data.core_X,
            data.labels,
            data.codes,
            data.doc_weights,
            splits,
            None if validation is None else (args.eval_set[0][0], *validation),  # type: ignore[index]
            self.n_jobs,
        )
        policy = Policy(
            name=type(self).__name__,
            grid=grid,
            scoring=self.scoring,
            relevance_threshold=self.relevance_threshold,
            score_tolerance=float(self.score_tolerance),
            threads=n_threads(self.n_jobs),
            # The early stop along C is the search's; the C search alone fits every C.
            patience=self.patience if searching else None,
            time_budget=self.time_budget,
            warm=bool(self.warm_start),
            confirm_tolerance=self.confirm_tolerance,
            verbose=int(self.verbose),
            # The race is the search's; the C search alone fits every C on every split.
            prune_margin=self.prune_margin if searching else None,
            # The search's fits only rank candidates; the C search alone keeps the eps given,
            # so that its split scores are those of SVMMap(C).fit.
            ranking_eps=RANKING_EPS if searching else 1.0,
        )
        try:
            outcome = run(candidates, split_data, policy)
        except ValueError as exc:
            # Every candidate was refused: the core's refusal names "loss", which the user
            # did not give when the losses came from ``losses=``.
            if self.losses is None or not str(exc).startswith("loss must be a loss whose oracle"):
                raise
            raise ValueError(f"losses={list(self.losses)!r}: no candidate can run on this data; {exc}") from None
        self.search_seconds_ = outcome.seconds
        self.scorer_ = QueryMeanScorer(self.scoring, self.relevance_threshold)
        self._set_choice(outcome)
        self._set_data_attributes(len(splits), data.n_features, data.names)
        del split_data  # The search's per-split codes go before the refit, never beside its.
        if self.refit:
            judged = None if validation is None else (args.eval_set[0][0], *validation[1:])  # type: ignore[index]
            refit_chosen(self, outcome, args, data, judged)

    def _set_choice(self, outcome: Any) -> None:
        self.cv_results_ = outcome.results
        self.best_index_ = outcome.best
        self.best_params_ = dict(outcome.results["params"][outcome.best])
        self.best_C_ = float(self.best_params_["C"])
        self.best_score_ = float(outcome.results["mean_test_score"][outcome.best])

    def _candidate(self, loss: Any, preprocessing: str, C: float, sparse: bool = False) -> Any:
        """The unfitted model of one candidate of the search: an SVMMap, or a Pipeline of its
        preprocessing and the SVMMap (whose step is named "svmmap")."""
        model = self._estimator(C).set_params(loss=loss)
        transformer = make_preprocessor(preprocessing, sparse, self.n_jobs)
        if transformer is None:
            return model
        from sklearn.pipeline import Pipeline

        return Pipeline([(preprocessing, transformer), ("svmmap", model)])

    def _set_data_attributes(self, n_splits: int, n_features: int, names: Optional[np.ndarray]) -> None:
        """The fitted attributes that describe the data, the same for the C search and the
        search over losses and preprocessing."""
        self.n_splits_ = n_splits
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _fitted(self) -> Any:
        if not hasattr(self, "best_estimator_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance has no refitted model; call fit(X, y, qid=...) with refit=True first"
            )
        return self.best_estimator_

    def predict(self, X: Any) -> np.ndarray:
        """Scores of ``best_estimator_`` (see `svmmap.SVMMap.predict`)."""
        return self._fitted().predict(X)

    def score(self, X: Any, y: Any, qid: Any = None, sample_weight: Any = None) -> float:
        """``scoring`` of ``best_estimator_``'s ranking, averaged over queries as in ``fit``."""
        model = self._fitted()
        if qid is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores = model.predict(X)
        return query_mean(self.scoring, y, scores, qid, sample_weight, self.relevance_threshold)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self) -> dict:
        return {"requires_y": True}
