"""Training on a Dask cluster: the oracles and cut sums run on the workers, the QP on the client.

``svmmap.dask.SVMMap`` takes the same parameters as ``svmmap.SVMMap`` and learns the same
model; only the place of the work changes. Every cutting-plane iteration sends the current
``w`` to the workers; each worker scores its partitions, runs the loss-augmented argmax of every
query in them and returns, per partition, the sums sum_q Delta_q and sum_q deltaPsi_q (a
vector of ``n_features`` numbers). The core's cutting-plane loop (``svmmap._core.solve``, the one
single-machine training runs) adds them up in partition order, divides by the number n of usable
training queries and solves the small working-set QP on the client. The data never leaves the
workers; per iteration and partition, ``w`` (``n_features`` numbers) travels to the worker and
``n_features + 1`` numbers per slack group come back. Each partition is prepared once where it
lives (``svmmap._core.Partition``: its values checked, its query groups, oracles and counts).

As with LightGBM's and XGBoost's Dask rankers, every query must lie entirely within one
partition (rows of one query may be in any order inside it). ``fit`` checks this and names the
offending query otherwise.

Validation sets and early stopping take ``svmmap.SVMMap.fit``'s arguments (``eval_set`` or
``eval_X``/``eval_y``, ``eval_qid``, ``callbacks``, ...). A validation set that is a Dask
collection is prepared once on the workers, as the training data is, and scored there every
round: per partition, ``w`` goes out and one number per query and metric comes back; the
client averages them and runs the early stopping. A set in memory is scored on the client.

Binned models train on the cluster too. ``svmmap.dask.Binner`` fits its thresholds on a Dask
collection exactly as ``svmmap.Binner`` does on the same rows in memory (each partition sends, per
feature, its distinct values with their counts; the client merges them and places the thresholds
with the same code), and its ``transform`` of a Dask collection bins every partition on the worker
that holds it, when training or prediction needs it, so the binned data never travels.

Requires the optional dependencies ``pip install "svmmap[dask]"`` (dask[array], dask[dataframe],
distributed).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._degenerate import score_spread
from ._evaluation_sets import (
    eval_set_message,
    labels_vary,
    memory_set,
    refuse_lightgbm_arguments,
    refuse_lightgbm_predict,
)
from ._training import Outcome, finish, fitting, watching
from ._training import progress_logging as _progress_logging
from ._validation import (
    check_labels,
    check_matrix,
    check_qid,
    feature_names_of,
    forget_fit,
    n_threads,
    overflow_named,
    qid_of,
)
from .binning import Binner as _LocalBinner
from .binning import _as_dense
from .estimator import SVMMap as _LocalSVMMap

__all__ = ["Binner", "BinnedPartitions", "SVMMap"]


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a`` as an aligned C-ordered array (a CoreMatrix aligns its own arrays)."""
    return np.require(a, requirements=["C", "A"])


class _Part:
    """One partition prepared on a worker, once: the arrays the core borrows, query codes,
    and the core's prepared problem (``_core.Partition``: matrix checked, groups, oracles and
    query counts), which every iteration's cut sums reuse."""

    # None for a partition without rows (see `_empty`).
    problem: Optional["_core.Partition"]
    core_X: Any

    def __init__(self, X: Any, y: Any, qid: Any, index: int, config: "_core.TrainConfig") -> None:
        if _rows_of(X) == 0:
            self._empty(X, y, qid, index)
            return
        try:
            core_X, n_rows, n_features = check_matrix(X)
            labels = check_labels(y, n_rows)
            if qid is None:
                raise ValueError("qid is required")
            codes, uniques = check_qid(qid, n_rows, required_by="svmmap.dask.SVMMap.fit")
            # Blocks rebuilt from network frames may be unaligned views; the core borrows
            # aligned, C-ordered arrays (a copy is made only for an unaligned block, once).
            labels, codes = _aligned(labels), _aligned(codes)
            self.problem = _core.Partition(core_X, labels, codes, len(uniques), config)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"partition {index}: {exc}") from None
        # Kept for the degenerate rule after the fit (`_part_spread`); the problem holds them too.
        self.labels, self.codes = labels, codes
        self.uniques = uniques
        self.n_rows = n_rows
        self.n_features = n_features
        self.core_X = core_X
        # The arrays the prepared problem keeps, which moving it to another worker would send.
        self.nbytes = sum(a.nbytes for a in core_X.arrays) + labels.nbytes + codes.nbytes + uniques.nbytes
        # The core's rule of which queries can contribute to training: with the losses of
        # config, so that queries only a graded loss can use ("pairwise") count in n as they
        # do on one machine.
        self.counts = self.problem.counts

    def _empty(self, X: Any, y: Any, qid: Any, index: int) -> None:
        """A partition without rows (a dask array filtered by a mask often has some): it holds
        no query, takes no part in the passes (the fit leaves it out) and adds nothing to the
        columns' moments; its labels and query ids must be empty too."""
        _check_empty(y, qid, index, ("X", "y", "qid"))
        self.problem = None
        self.uniques = np.zeros(0, dtype=np.asarray(qid if qid is not None else []).dtype)
        self.n_rows = 0
        self.n_features = int(X.shape[1])  # 2-D: `_rows_of` gave 0
        self.core_X = None
        self.nbytes = 0
        self.counts = _core.ProblemSummary.merge([])

    def __sizeof__(self) -> int:
        # Dask sizes data with sys.getsizeof. Without the arrays counted, a prepared partition
        # looks free to move, and the scheduler's cost model would move it for any task.
        return object.__sizeof__(self) + self.nbytes


def _check_empty(y: Any, qid: Any, index: int, names: Tuple[str, str, str]) -> None:
    """The labels and query ids of a partition whose X (named ``names[0]``) has no rows must be
    empty too."""
    for name, values in zip(names[1:], (y, qid)):
        if values is not None and len(values) != 0:
            raise ValueError(f"partition {index}: {names[0]} has no rows but {name} has {len(values)} values")


class _EvalPart:
    """One partition of a Dask validation set, prepared on its worker once (its matrix,
    labels and query codes checked), with what every round's scoring of it needs: the metrics,
    the relevance threshold and the set's names for messages."""

    core_X: Any

    def __init__(self, X: Any, y: Any, qid: Any, index: int, set_index: int, metrics: list, threshold: float) -> None:
        self.index, self.metrics, self.threshold = index, metrics, threshold
        x_name, y_name = f"eval_set[{set_index}] X", f"eval_set[{set_index}] y"
        self.names = (x_name, y_name)
        self.n_rows = _rows_of(X)
        if self.n_rows == 0:
            # Left out of every round, as an empty training partition is.
            _check_empty(y, qid, index, (x_name, y_name, f"eval_qid[{set_index}]"))
            self.core_X, self.n_features = None, int(X.shape[1])
            self.uniques = np.zeros(0, dtype=np.asarray(qid).dtype)
            self.nbytes = 0
            return
        try:
            core_X, self.n_rows, self.n_features = check_matrix(X, name=x_name)
            labels = check_labels(y, self.n_rows, name=y_name, rows_name=x_name)
            codes, uniques = check_qid(
                qid,
                self.n_rows,
                required_by=f"eval_set[{set_index}]",
                qid_name=f"eval_qid[{set_index}]",
                rows_name=x_name,
            )
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"partition {index}: {exc}") from None
        self.core_X, self.labels, self.codes, self.uniques = core_X, labels, codes, uniques
        self.nbytes = sum(a.nbytes for a in core_X.arrays) + labels.nbytes + codes.nbytes + uniques.nbytes

    def __sizeof__(self) -> int:
        # As `_Part`'s: the arrays count, so that the scheduler does not move the partition.
        return object.__sizeof__(self) + self.nbytes


def _eval_part_summary(part: _EvalPart) -> Tuple[np.ndarray, int, int]:
    """A validation partition's query ids, rows and features, for the client's checks."""
    return part.uniques, int(part.n_rows or 0), part.n_features


def _eval_part_scores(part: _EvalPart, w: np.ndarray, n_jobs: Optional[int]) -> Dict[str, tuple]:
    """Per metric, the partition's queries where it is defined and its value on each, at the
    model w (one number per query and metric goes back, the documents stay)."""
    from .metrics import evaluate

    # w arrives in a network frame and may be an unaligned view (as in `_part_cut_sums`).
    w = np.require(w, dtype=np.float64, requirements=["C", "A"])
    try:
        scores = _core.predict(part.core_X, w, _worker_threads(n_jobs))
        result = evaluate(part.labels, scores, part.codes, part.metrics, relevance_threshold=part.threshold)
    except ValueError as exc:
        raise ValueError(f"{eval_set_message(str(exc), *part.names)} (partition {part.index})") from None
    # The metrics number the queries by their codes, which index the partition's query ids.
    return {m: (part.uniques[pq.qids], pq.values) for m, pq in result.per_query.items()}


def _eval_part_varies(part: _EvalPart, w: Any, n_jobs: Optional[int]) -> bool:
    """Whether the first metric can change on the partition's queries (`labels_vary`)."""
    return labels_vary(part.metrics[0], part.labels, part.codes, part.threshold)


def _merged_means(answers: List[Dict[str, tuple]], metrics: List[str]) -> Dict[str, float]:
    """The mean of every metric over the queries of all partitions, taken over the values in
    the order of their query ids: the order ``svmmap.metrics.evaluate`` averages them in on the
    whole set in memory, so that the means are those of an in-memory validation set bit for
    bit (ids that cannot be sorted stay in partition order)."""
    means = {}
    for m in metrics:
        qids = np.concatenate([a[m][0] for a in answers])
        values = np.concatenate([a[m][1] for a in answers])
        try:
            order = np.argsort(qids, kind="stable")
        except TypeError:
            order = np.arange(len(qids))
        means[m] = float(np.mean(values[order])) if values.size else float("nan")
    return means


def _dask_sets(client: Any, n_jobs: Optional[int], futures: list) -> Callable[..., Any]:
    """The `_evaluation_sets.SetPreparer` of a Dask fit: a validation set that is a Dask
    collection is prepared on the workers and scored there every round; one in memory is
    scored on the client, as ``svmmap.SVMMap`` scores it. The prepared partitions' futures are
    added to ``futures``, which the fit cancels when it ends."""
    from dask import delayed

    def prepare(
        i: int, ex: Any, ey: Any, g: Any, kind: str, metrics: list, n_features: int, threads: int, threshold: float
    ) -> Tuple[Callable[[np.ndarray], dict], dict, Callable[[], bool]]:
        if not (isinstance(ex, BinnedPartitions) or _is_dask_array(ex) or _is_dask_frame(ex)):
            return memory_set(i, ex, ey, g, kind, metrics, n_features, threads, threshold)
        if kind == "eval_group":
            raise ValueError(
                f"eval_set[{i}] is a Dask collection: give its query ids as eval_qid (a dask array or Series "
                "partitioned like its X), not query sizes as eval_group"
            )
        x_blocks, y_blocks, q_blocks, _ = _partitions(
            ex, ey, g, (f"eval_set[{i}] y", f"eval_qid[{i}]"), f"eval_set[{i}] X"
        )
        tasks = [
            delayed(_EvalPart, pure=False)(xb, yb, qb, j, i, metrics, threshold)
            for j, (xb, yb, qb) in enumerate(zip(x_blocks, y_blocks, q_blocks))
        ]
        parts = client.compute(tasks)
        futures.extend(parts)
        infos = client.gather(client.map(_eval_part_summary, parts, pure=False))
        widths = {d for _, n, d in infos if n > 0}
        if not widths:
            raise ValueError(f"eval_set[{i}] X has no rows")
        if len(widths) > 1:
            raise ValueError(f"the partitions of eval_set[{i}] X have different numbers of features: {sorted(widths)}")
        if widths != {n_features}:
            raise ValueError(f"eval_set[{i}] has {widths.pop()} features, but X has {n_features}")
        try:
            _check_whole_queries([u for u, _, _ in infos])
        except ValueError as exc:
            raise ValueError(f"eval_set[{i}]: {exc}") from None
        rounds = _Rounds(client, [p for p, (_, n, _) in zip(parts, infos) if n > 0], n_jobs)

        def scorer(coef: np.ndarray) -> dict:
            return _merged_means(rounds(_eval_part_scores, coef), metrics)

        # Scored at w = 0 before any training, as a set in memory is: bad values fail here.
        return scorer, scorer(np.zeros(n_features)), lambda: any(rounds(_eval_part_varies, np.zeros(0)))

    return prepare


def _rows_of(X: Any) -> Optional[int]:
    """The number of rows of a block (array, DataFrame or sparse matrix), None if it has no
    2-D shape (check_matrix then says what is wrong)."""
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) == 2 else None


def _prepare(X: Any, y: Any, qid: Any, index: int, config: "_core.TrainConfig") -> _Part:
    return _Part(X, y, qid, index, config)


def _part_summary(
    part: _Part, n_jobs: Optional[int]
) -> Tuple[np.ndarray, int, int, "_core.ProblemSummary", Tuple[np.ndarray, np.ndarray]]:
    """What the client needs of a partition before the first pass: its query ids, size,
    feature count and query counts, and its columns' means and variances (for
    ``feature_importances_``)."""
    if part.core_X is None:
        moments = (np.zeros(part.n_features), np.zeros(part.n_features))
    else:
        moments = part.core_X.column_moments(_worker_threads(n_jobs))
    return part.uniques, part.n_rows, part.n_features, part.counts, moments


def _on_each(task: Callable[..., Any], *parts: _Part, w: np.ndarray, n_jobs: Optional[int]) -> list:
    """``task`` on each of a worker's partitions, in the order given (one task per worker)."""
    return [task(part, w=w, n_jobs=n_jobs) for part in parts]


def _batches_by_worker(holders: dict, parts: list) -> List[Tuple[Optional[List[str]], List[int]]]:
    """The partitions (by index) grouped by the worker that holds them, in partition order
    within a group: (the worker, as Dask's ``workers=``, or None when unknown; indices). A
    partition held by several workers goes with the first of them; one held by none (lost,
    to be recomputed) is a batch of its own, placed by the scheduler."""
    batches: Dict[Optional[str], List[int]] = {}
    alone: List[Tuple[Optional[List[str]], List[int]]] = []
    for i, part in enumerate(parts):
        home = sorted(holders.get(part.key, ()))
        if home:
            batches.setdefault(home[0], []).append(i)
        else:
            alone.append((None, [i]))
    return [([worker], indices) for worker, indices in batches.items() if worker is not None] + alone


class _Rounds:
    """A task run on every prepared partition, per round: ``rounds(task, w)`` gives
    ``task(part, w=w, n_jobs=n_jobs)`` of every partition, in partition order."""

    def __init__(self, client: Any, parts: list, n_jobs: Optional[int]) -> None:
        self.client, self.parts, self.n_jobs = client, parts, n_jobs
        # Each round's task goes to the worker that holds its prepared partition. Left to the
        # scheduler, a task was sometimes placed on the other worker, which first fetched the
        # whole partition: at MSLR-WEB30K's fold shape, 3.8 s for a 0.1 s pass, in about half
        # of the fits. The preference is loose, so that a partition recomputed elsewhere after
        # a worker is lost still has its task run.
        self.batches = _batches_by_worker(client.who_has(parts), parts)

    def __call__(self, task: Callable[..., Any], w: np.ndarray) -> list:
        # One task per worker and round, over the partitions it holds: a task per partition
        # paid the scheduler's round trip once per partition (8 partitions on 2 workers took
        # 2.2 times the in-memory fit). The answers come back in partition order: the core adds
        # the cut sums in that order, so the model does not depend on which worker answers first.
        futures = [
            self.client.submit(
                _on_each,
                task,
                *[self.parts[i] for i in indices],
                w=w,
                n_jobs=self.n_jobs,
                pure=False,
                workers=home,
                allow_other_workers=True,
            )
            for home, indices in self.batches
        ]
        answers: list = [None] * len(self.parts)
        for (_, indices), results in zip(self.batches, self.client.gather(futures)):
            for i, result in zip(indices, results):
                answers[i] = result
        return answers


def _part_spread(part: _Part, w: np.ndarray, n_jobs: Optional[int]) -> Optional[bool]:
    """The partition's `score_spread` at the model w (it holds whole queries)."""
    # w arrives in a network frame and may be an unaligned view (as in `_part_cut_sums`).
    w = np.require(w, dtype=np.float64, requirements=["C", "A"])
    scores = _core.predict(part.core_X, w, _worker_threads(n_jobs))
    return score_spread(scores, part.labels, part.codes)


def _merged_std(parts: List[Tuple[int, np.ndarray, np.ndarray]]) -> np.ndarray:
    """The standard deviation of every column over the rows of all partitions, from each
    partition's (rows, means, variances), combined in partition order: the variance of the
    union is the rows' share of each partition's variance plus that of its mean's distance
    from the overall mean (Chan, Golub and LeVeque's pairwise update, in one step)."""
    total = sum(n for n, _, _ in parts)
    mean = sum(n * m for n, m, _ in parts) / total
    variance = sum(n * (v + (m - mean) ** 2) for n, m, v in parts) / total
    return np.sqrt(np.maximum(variance, 0.0))


def _worker_threads(n_jobs: Optional[int]) -> int:
    """n_jobs threads, or (None) as many as the worker was given (all cores when unknown)."""
    if n_jobs is not None:
        return n_threads(n_jobs)
    try:
        from distributed import get_worker

        worker = get_worker()
        state = getattr(worker, "state", None)
        nthreads = getattr(state, "nthreads", None) or getattr(worker, "nthreads", None)
        return int(nthreads) if nthreads else 0
    except (ImportError, ValueError, AttributeError):
        return 0


def _part_cut_sums(part: _Part, w: np.ndarray, n_jobs: Optional[int]) -> list:
    """The worker's share of an iteration: one (sum Delta, sum deltaPsi) pair per slack group,
    not divided by n (the core adds the parts up and divides)."""
    # w arrives in a network frame and may be an unaligned view.
    w = np.require(w, dtype=np.float64, requirements=["C", "A"])
    # The fit leaves partitions without rows out of its passes.
    assert part.problem is not None
    return part.problem.cut_sums(w, _worker_threads(n_jobs))


def _predict_block(block: Any, coef: np.ndarray, n_jobs: Optional[int], binner: Any = None) -> np.ndarray:
    if _rows_of(block) == 0:
        # An empty partition has no scores (check_matrix refuses 0 rows, as for in-memory X).
        return np.zeros(0)
    if binner is not None:
        block = binner.transform(block)
    core_X, _, n_features = check_matrix(block)
    if n_features != coef.shape[0]:
        raise ValueError(f"X has {n_features} features, but the model was fitted with {coef.shape[0]} features")
    # Blocks and coef may arrive as unaligned views of network frames.
    return _core.predict(core_X, _aligned(coef), _worker_threads(n_jobs))


def _predict_frame(frame: Any, coef: np.ndarray, n_jobs: Optional[int], binner: Any = None) -> Any:
    import pandas as pd

    return pd.Series(_predict_block(frame, coef, n_jobs, binner), index=frame.index, name="score")


def _is_dask_array(obj: Any) -> bool:
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "chunks") and hasattr(obj, "ndim")


def _is_dask_frame(obj: Any) -> bool:
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "npartitions") and not hasattr(obj, "chunks")


def _row_blocks(obj: Any, name: str, row_chunks: Optional[Tuple[int, ...]], n_parts: int, x_name: str = "X") -> list:
    """The row partitions of y or qid as a list of Delayed (or plain) objects, aligned with
    those of X (named ``x_name`` in messages)."""
    if _is_dask_array(obj):
        if obj.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {obj.shape}")
        if row_chunks is not None and obj.chunks[0] != row_chunks:
            if any(np.isnan(c) for c in obj.chunks[0]):
                raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
            if obj.shape[0] != sum(row_chunks):
                # The lengths, as check_labels and check_qid word them; rechunk would say only
                # "Chunks do not add up to shape".
                raise ValueError(f"{name} has {obj.shape[0]} entries but {x_name} has {sum(row_chunks)} rows")
            obj = obj.rechunk((row_chunks,))
        blocks = list(obj.to_delayed().ravel())
    elif _is_dask_frame(obj):
        blocks = list(obj.to_delayed())
    else:
        if row_chunks is None:
            raise TypeError(
                f"{name} must be a dask collection partitioned like {x_name} when {x_name} is a dask DataFrame, "
                f"got {type(obj).__name__}"
            )
        arr = np.asarray(obj)
        if arr.ndim != 1 or arr.shape[0] != sum(row_chunks):
            raise ValueError(
                f"{name} must be 1-D with one entry per row of {x_name} ({sum(row_chunks)}), got shape {arr.shape}"
            )
        bounds = np.cumsum((0,) + tuple(row_chunks))
        blocks = [arr[bounds[i] : bounds[i + 1]] for i in range(len(row_chunks))]
    if len(blocks) != n_parts:
        raise ValueError(
            f"{name} has {len(blocks)} partitions but {x_name} has {n_parts}; X, y and qid must be "
            "partitioned alike (e.g. columns of one dask DataFrame, or dask arrays with the same row chunks)"
        )
    return blocks


def _partitions(
    X: Any, y: Any, qid: Any, names: Tuple[str, str] = ("y", "qid"), x_name: str = "X"
) -> Tuple[list, list, list, Optional[np.ndarray]]:
    """X, y and qid (named ``x_name`` and ``names`` in messages) as three aligned lists of
    per-partition objects, and X's column names."""
    if isinstance(X, BinnedPartitions):
        from dask import delayed

        raw, row_chunks, _ = _x_blocks(X.source, x_name)
        # Each partition is binned by the task that prepares it, on its worker.
        x_blocks = [delayed(_binned_block, pure=True)(b, X.binner) for b in raw]
        columns = None
    elif _is_dask_array(X) or _is_dask_frame(X):
        x_blocks, row_chunks, columns = _x_blocks(X, x_name)
    else:
        raise TypeError(
            f"svmmap.dask.SVMMap.fit takes a dask array or dask DataFrame X, got {type(X).__name__}; "
            "use svmmap.SVMMap for data in memory"
        )
    n_parts = len(x_blocks)
    y_blocks = _row_blocks(y, names[0], row_chunks, n_parts, x_name)
    q_blocks = _row_blocks(qid, names[1], row_chunks, n_parts, x_name)
    return x_blocks, y_blocks, q_blocks, columns


def _qid_of_group(X: Any, qid: Any, group: Any) -> Any:
    """``qid``, or the query ids 0, 1, 2, ... that LightGBM's query sizes ``group`` make for
    the rows of a dask array ``X`` (in memory; `_row_blocks` cuts them along ``X``'s row
    chunks). A dask DataFrame's query ids are one of its columns, which ``qid`` takes."""
    if group is None:
        return qid
    source = X.source if isinstance(X, BinnedPartitions) else X
    if not _is_dask_array(source):
        raise TypeError(
            "svmmap.dask.SVMMap.fit takes group= (query sizes) with a dask array X only: for a dask DataFrame "
            "give its query-id column as qid= (partitioned like X)"
        )
    n_rows = source.shape[0]
    if n_rows != n_rows:  # NaN: the row chunks are unknown
        raise ValueError("X has unknown chunk sizes; call X.compute_chunk_sizes() before fit(..., group=...)")
    if _is_dask_array(group):
        group = group.compute()
    return qid_of(qid, group, int(n_rows))


def _check_whole_queries(uniques: List[np.ndarray]) -> None:
    """Raises if a query id occurs in more than one partition."""
    non_empty = [(i, u) for i, u in enumerate(uniques) if len(u)]
    if not non_empty:
        return
    values = np.concatenate([u for _, u in non_empty])
    owners = np.concatenate([np.full(len(u), i) for i, u in non_empty])
    try:
        order = np.argsort(values, kind="stable")
    except TypeError as exc:
        raise ValueError(f"qid values of different partitions cannot be compared: {exc}") from None
    sorted_values = values[order]
    dup = np.flatnonzero(sorted_values[1:] == sorted_values[:-1])
    if dup.size:
        q = sorted_values[dup[0]]
        q = q.item() if isinstance(q, np.generic) else q
        parts = sorted(set(owners[order][(sorted_values == q)].tolist()))
        raise ValueError(
            f"query {q!r} has rows in partitions {parts}: every partition must hold whole queries "
            f"({dup.size} quer{'y is' if dup.size == 1 else 'ies are'} split). Sort the rows by qid and "
            "cut the chunks at query boundaries, or for a dask DataFrame with a qid column use "
            "ddf.shuffle(on='qid') (as for LightGBM's and XGBoost's Dask rankers)."
        )


class _ClientMixin:
    """The Dask client an estimator works with: ``self.client`` if set, else the default one."""

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` to work with (default: ``distributed.default_client()``)."""
        return self.__dict__.get("_client")

    @client.setter
    def client(self, value: Any) -> None:
        self.__dict__["_client"] = value

    def _get_client(self) -> Any:
        if self.client is not None:
            return self.client
        try:
            from distributed import default_client
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError('svmmap.dask needs dask.distributed: pip install "svmmap[dask]"') from exc
        try:
            return default_client()
        except ValueError:
            raise ValueError(
                f"svmmap.dask.{type(self).__name__} needs a dask.distributed Client: create one first "
                "(client = distributed.Client(...)) or set model.client"
            ) from None

    def __getstate__(self) -> dict:
        # A client is a live connection: it is not part of the model.
        state = dict(self.__dict__)
        state.pop("_client", None)
        return state


#: Values (distinct values and counts) gathered on the client per round of the threshold fit:
#: feature columns are fetched in batches of about this many values, which bounds the client's
#: memory whatever the number of features.
_FIT_BATCH_VALUES = 1 << 24


def _bin_block(block: Any, index: int, first_row: Optional[int], missing: str) -> np.ndarray:
    """A partition as the dense float array the binner reads, after the checks of
    ``svmmap.Binner``: infinity is an error, and NaN too unless it marks a missing value.
    ``first_row`` is the partition's first row in X, when known (dask arrays), for the message.
    A partition without rows gives an empty array, which the fit leaves out."""
    if _rows_of(block) == 0:
        return np.zeros((0, int(block.shape[1])))
    try:
        arr = _as_dense(block)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"partition {index}: {exc}") from None
    bad = np.isinf(arr) if missing == "indicator" else ~np.isfinite(arr)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        v = arr[r, c]
        what = (
            'NaN: missing values need missing="indicator"' if np.isnan(v) else f"{v}: features must be finite numbers"
        )
        where = f"X[{first_row + r}, {c}]" if first_row is not None else f"X[{r}, {c}] of partition {index}"
        raise ValueError(f"{where} is {what} (partition {index}, its row {r})")
    return arr


def _column_values(arr: np.ndarray, columns: Tuple[int, int]) -> list:
    """Per column of ``arr[:, lo:hi]``, its distinct non-NaN values (float64, sorted) and their counts."""
    out = []
    for j in range(*columns):
        col = arr[:, j].astype(np.float64)
        values, counts = np.unique(col[~np.isnan(col)], return_counts=True)
        out.append((values, counts))
    return out


def _block_shape(arr: np.ndarray) -> Tuple[int, int]:
    return arr.shape


def _binned_block(block: Any, binner: "_LocalBinner") -> Any:
    """The binned features of one partition (on the worker that holds it); a partition without
    rows gives an empty block of the binned width, which the fit leaves out."""
    if _rows_of(block) == 0:
        return np.zeros((0, binner.n_output_features_))
    return binner.transform(block)


def _x_blocks(X: Any, name: str = "X") -> Tuple[list, Optional[Tuple[int, ...]], Optional[np.ndarray]]:
    """The row partitions of a dask array or DataFrame X (named ``name`` in messages) as
    Delayed objects, the row chunk sizes (for an array) and the column names (for a DataFrame)."""
    if _is_dask_array(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be a 2-D dask array (documents x features), got {X.ndim} dimension(s)")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
        if X.numblocks[1] > 1:
            # Whole rows must be on one worker; the feature dimension is never split.
            X = X.rechunk({1: -1})
        return list(X.to_delayed()[:, 0]), tuple(int(c) for c in X.chunks[0]), None
    if _is_dask_frame(X):
        return list(X.to_delayed()), None, feature_names_of(X)
    raise TypeError(f"expected a dask array or dask DataFrame, got {type(X).__name__}")


class BinnedPartitions:
    """A Dask collection seen through a fitted binner: what ``svmmap.dask.Binner.transform``
    returns for Dask input.

    Nothing is computed when it is made. ``svmmap.dask.SVMMap.fit`` and ``predict`` bin each
    partition on the worker that holds it (to the compact bin codes or indicators that
    ``svmmap.Binner.transform`` gives in memory), so the binned data never travels.

    Attributes
    ----------
    source : dask.array.Array or dask.dataframe.DataFrame
        The base features, partitioned by rows.
    binner : svmmap.Binner
        The fitted binner (a plain, in-memory one) applied to every partition.
    """

    def __init__(self, source: Any, binner: "_LocalBinner") -> None:
        self.source = source
        self.binner = binner

    @property
    def npartitions(self) -> int:
        return len(_x_blocks(self.source)[0])

    def __repr__(self) -> str:
        return f"BinnedPartitions({self.npartitions} partitions, {self.binner.n_output_features_} binned features)"


class Binner(_ClientMixin, _LocalBinner):
    """``svmmap.Binner`` whose ``fit`` and ``transform`` also take Dask collections.

    ``fit`` on a dask array or DataFrame (partitioned by rows) gives exactly the thresholds that
    ``svmmap.Binner`` fits on the same rows in memory: each partition sends, per feature, its
    distinct values and their counts (features are fetched in batches, so the client holds
    about 2^24 values at a time), the client merges them into the feature's sorted training
    values and places the thresholds with the same code. The exchange is exact, and small for
    features with few distinct values (LETOR's many zeros, ranks, counts); for a continuous
    feature it is up to one value and one count per document.

    ``transform`` of a Dask collection returns a lazy `BinnedPartitions`, which
    ``svmmap.dask.SVMMap`` trains on and predicts from, binning each partition where it lies;
    in-memory data is transformed as by ``svmmap.Binner``. The fitted binner works on
    in-memory data like any ``svmmap.Binner`` (``to_local()`` returns one).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> import svmmap, svmmap.dask
    >>> from svmmap.datasets import load_mq2008
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     binner = svmmap.dask.Binner(n_thresholds=20).fit(da.from_array(X, chunks=(1000, 46)))
    >>> local = svmmap.Binner(n_thresholds=20).fit(X)
    >>> all(np.array_equal(a, b) for a, b in zip(binner.thresholds_, local.thresholds_))
    True
    """

    def fit(self, X: Any, y: Any = None, qid: Any = None) -> "Binner":
        """Fit the thresholds of every column of ``X`` (a Dask collection or in-memory data).

        Parameters
        ----------
        X : dask.array.Array, dask.dataframe.DataFrame or array-like of shape (n_documents, n_base_features)
            Base feature values, partitioned by rows for Dask input.
        y, qid : ignored for Dask input (pairwise interactions are refused there); for
            in-memory data, as ``svmmap.Binner.fit``.

        Returns
        -------
        self : svmmap.dask.Binner
        """
        forget_fit(self)
        if not (_is_dask_array(X) or _is_dask_frame(X)):
            return super().fit(X, y, qid=qid)
        from dask import delayed

        config = self._check_params()
        if self.interactions is not None:
            raise ValueError(
                "svmmap.dask.Binner does not fit pairwise interactions on Dask collections "
                f"(interactions={self.interactions!r}); fit svmmap.Binner(interactions=...) on data in memory"
            )
        # The merged columns hold no NaN (each partition sends its non-NaN values), so they
        # are fitted as columns without missing values.
        column_config = _core.BinnerConfig(**{**config.kwargs(), "missing": "error"})
        client = self._get_client()
        blocks, row_chunks, names = _x_blocks(X)
        starts: List[Optional[int]] = (
            [int(v) for v in np.cumsum((0,) + row_chunks)[:-1]] if row_chunks is not None else [None] * len(blocks)
        )
        parts = client.compute(
            [delayed(_bin_block, pure=False)(b, i, starts[i], self.missing) for i, b in enumerate(blocks)]
        )
        try:
            shapes = client.gather(client.map(_block_shape, parts, pure=False))
            widths = {d for n, d in shapes if n > 0}
            if not widths:
                raise ValueError("X has no rows")
            if len(widths) > 1:
                raise ValueError(f"the partitions of X have different numbers of features: {sorted(widths)}")
            n_features = widths.pop()
            n_rows = sum(n for n, _ in shapes)
            parts = [p for p, (n, _) in zip(parts, shapes) if n > 0]
            batch = max(1, _FIT_BATCH_VALUES // max(n_rows, 1))
            values: List[np.ndarray] = []
            for lo in range(0, n_features, batch):
                hi = min(lo + batch, n_features)
                per_part = client.gather(client.map(_column_values, parts, columns=(lo, hi), pure=False))
                for j in range(hi - lo):
                    values.append(self._fit_column([p[j] for p in per_part], column_config))
        finally:
            client.cancel(parts)
        self.thresholds_ = values
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_output_features_ = self._spec(config).n_output
        return self

    def _fit_column(self, parts: List[Tuple[np.ndarray, np.ndarray]], config: _core.BinnerConfig) -> np.ndarray:
        """The thresholds of one feature from its partitions' distinct values and counts."""
        values = np.concatenate([v for v, _ in parts])
        counts = np.concatenate([c for _, c in parts])
        distinct, inverse = np.unique(values, return_inverse=True)
        # Every training value, sorted, with its multiplicity: exactly the column that the
        # in-memory fit sorts, so that the same code places the same thresholds.
        column = np.repeat(
            distinct, np.bincount(inverse.ravel(), weights=counts, minlength=len(distinct)).astype(np.int64)
        )
        k, _ = _core.bin_fit(column.reshape(-1, 1), config, n_threads(self.n_jobs))
        return k.copy()

    def transform(self, X: Any) -> Any:
        """The binned features of ``X``: a lazy `BinnedPartitions` for a Dask collection
        (binned partition by partition where it is used), else what ``svmmap.Binner.transform``
        returns."""
        if not (_is_dask_array(X) or _is_dask_frame(X)):
            return super().transform(X)
        self._check_fitted()
        _x_blocks(X)  # checks the collection's shape
        return BinnedPartitions(X, self.to_local())

    def to_local(self) -> _LocalBinner:
        """A plain ``svmmap.Binner`` with the same parameters and thresholds."""
        self._check_fitted()
        return _LocalBinner.from_dict(self.to_dict())


class SVMMap(_ClientMixin, _LocalSVMMap):
    """``svmmap.SVMMap`` trained on a Dask cluster; same parameters, same model.

    ``fit(X, y, qid=...)`` takes a dask array or dask DataFrame ``X`` whose partitions
    (row chunks) each hold whole queries, and ``y`` and ``qid`` partitioned alike (dask arrays or
    Series; numpy arrays are cut along ``X``'s row chunks). The loss-augmented argmax of every
    query and the cut sums are computed on the workers that hold the partitions; the client
    adds the partitions' sums in partition order and runs the cutting-plane loop and its QP.
    The model equals the one ``svmmap.SVMMap`` learns on the same data up to floating-point
    rounding in the order of the sums, with validation sets and early stopping too (Dask
    validation sets are scored on the workers).

    The Dask client is ``model.client`` if set, else ``distributed.default_client()``.
    ``n_jobs`` is the number of threads each worker uses (None: the worker's own thread count).
    After ``fit``, ``predict`` accepts dask arrays and DataFrames (lazily, one task per
    partition) as well as in-memory data, and ``to_local()`` returns a plain ``svmmap.SVMMap``.
    The parameters are those of ``svmmap.SVMMap``, with the same meanings.

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from svmmap.datasets import load_mq2008
    >>> import svmmap.dask
    >>> X, y, qid = load_mq2008(fold=1, split="vali")
    >>> # Cut the rows at query boundaries into two partitions.
    >>> cut = int(np.flatnonzero(qid[1:] != qid[:-1])[len(set(qid)) // 2]) + 1
    >>> chunks = (cut, len(qid) - cut)
    >>> with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, Client(cluster) as client:
    ...     dX = da.from_array(X, chunks=(chunks, X.shape[1]))
    ...     model = svmmap.dask.SVMMap(C=10.0).fit(dX, da.from_array(y, chunks=(chunks,)), qid=da.from_array(qid, chunks=(chunks,)))
    >>> local = svmmap.SVMMap(C=10.0).fit(X, y, qid=qid)
    >>> bool(np.allclose(model.coef_, local.coef_, rtol=0, atol=1e-8))
    True
    """

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
        eval_metric: Optional[Union[str, Sequence[str]]] = None,
        eval_at: Optional[Sequence[int]] = None,
        early_stopping_rounds: Optional[int] = None,
        eval_names: Optional[Sequence[str]] = None,
        eval_X: Any = None,
        eval_y: Any = None,
        callbacks: Optional[Sequence[Any]] = None,
        **lightgbm_kwargs: Any,
    ) -> "SVMMap":
        """Learn ``coef_`` on the cluster from documents grouped by query.

        Parameters
        ----------
        X : dask.array.Array or dask.dataframe.DataFrame of shape (n_documents, n_features)
            Partitioned by rows so that each partition holds whole queries. A dask array's
            feature dimension may be chunked; it is joined into one chunk. Or the
            `BinnedPartitions` of such a collection (``svmmap.dask.Binner().fit(X)
            .transform(X)``): each partition is then binned on its worker and the model learns
            the binned features' weights, as ``Pipeline(Binner(), SVMMap())`` does in memory.
        y : dask array or Series, or array-like, of shape (n_documents,)
            Relevance labels, partitioned like ``X`` (array-likes are cut along ``X``'s row
            chunks when ``X`` is a dask array).
        qid : dask array or Series, or array-like, of shape (n_documents,)
            Query id of every document, partitioned like ``X``.
        group : array-like of int, optional
            Instead of ``qid``, LightGBM's query sizes in row order (as in
            ``svmmap.SVMMap.fit``), for a dask array ``X``: the query ids they make are cut along
            ``X``'s row chunks, each of which must hold whole queries. A dask DataFrame carries
            its query ids as a column: give that column as ``qid``.
        sample_weight : None
            Not available here (the partitions' cut sums are unweighted): a TypeError says so.
            Weighted queries train with ``svmmap.SVMMap.fit(..., sample_weight=...)`` in memory.
        eval_set : list of (X, y) tuples, optional
            Validation sets scored at every round, as in ``svmmap.SVMMap.fit``. A set in memory
            is scored on the client; a set whose ``X`` is a Dask collection (or its
            `BinnedPartitions`) is prepared once on the workers, each partition holding whole
            queries, and scored there every round: per partition, ``w`` goes out and one number
            per query and metric comes back, and the client averages them as
            ``svmmap.metrics.evaluate`` does. Its ``y`` and ``eval_qid`` entry are partitioned
            like its ``X``, as ``y`` and ``qid`` are like ``X``.
        eval_group : list of array-like of int, optional
            The query sizes of every validation set, for sets in memory only (a Dask set takes
            ``eval_qid``).
        eval_qid : list of array-like or dask collections, optional
            The query ids of every validation set, as ``qid``.
        eval_metric, eval_at, early_stopping_rounds, eval_names, eval_X, eval_y, callbacks
            As in ``svmmap.SVMMap.fit``: the metrics, LightGBM's NDCG cutoffs, early stopping
            (``coef_`` is the iterate of the best validation score), the sets' names, LightGBM
            4.7's spelling of ``eval_set``, and LightGBM's training callbacks
            (``svmmap.early_stopping``, ``svmmap.log_evaluation``, ``svmmap.record_evaluation``).
            A validation set that is the training data itself (the very ``X`` and ``y``
            collections) is recorded as ``training`` and never watched by early stopping.
        **lightgbm_kwargs
            LightGBM's other ``fit`` arguments are refused with the svmmap equivalent.

        Returns
        -------
        self : svmmap.dask.SVMMap
        """
        watch_args = dict(
            eval_set=eval_set,
            eval_group=eval_group,
            eval_qid=eval_qid,
            eval_metric=eval_metric,
            eval_at=eval_at,
            early_stopping_rounds=early_stopping_rounds,
            eval_names=eval_names,
            eval_X=eval_X,
            eval_y=eval_y,
            callbacks=callbacks,
        )
        with fitting(self):
            refuse_lightgbm_arguments(f"svmmap.dask.{type(self).__name__}", lightgbm_kwargs)
            if sample_weight is not None:
                raise TypeError(
                    f"svmmap.dask.{type(self).__name__}.fit() does not take sample_weight: the partitions' cut sums "
                    "are unweighted; train svmmap.SVMMap(...).fit(X, y, qid=qid, sample_weight=w) on data in memory"
                )
            self._fit(X, y, _qid_of_group(X, qid, group), watch_args)
        return self

    def _fit(self, X: Any, y: Any, qid: Any, watch_args: Dict[str, Any]) -> None:
        """fit, inside `_training.fitting` (its clean-up on failure); ``watch_args`` are fit's
        LightGBM-style arguments, for `_training.watching`."""
        from dask import delayed

        config = self._config()
        if config.latent is not None:
            raise ValueError(
                f"loss={self.loss!r} is not supported by svmmap.dask.SVMMap (its CCCP rounds run on one "
                f"machine); train svmmap.SVMMap(loss={self.loss!r}) on a sample that fits in memory, or "
                f"loss={config.latent!r} (the paper's loss) here"
            )
        # The partitions' sums make one cut per slack group: blocks of queries would need every
        # partition to split its sums by global block.
        config.require_one_cut(
            "by svmmap.dask.SVMMap, which makes one cut per slack group and iteration", "None (or 1)"
        )
        if qid is None:
            check_qid(None, 0, required_by="svmmap.dask.SVMMap.fit")
        client = self._get_client()
        x_blocks, y_blocks, q_blocks, names = _partitions(X, y, qid)
        tasks = [
            delayed(_prepare, pure=False)(xb, yb, qb, i, config)
            for i, (xb, yb, qb) in enumerate(zip(x_blocks, y_blocks, q_blocks))
        ]
        parts = client.compute(tasks)
        # The futures of the validation sets' partitions, when some are Dask collections.
        eval_parts: list = []
        try:
            infos = client.gather(client.map(_part_summary, parts, n_jobs=self.n_jobs, pure=False))
            n_features_seen = {info[2] for info in infos if info[1] > 0}
            if not n_features_seen:
                raise ValueError("X has no rows")
            if len(n_features_seen) > 1:
                raise ValueError(f"the partitions of X have different numbers of features: {sorted(n_features_seen)}")
            n_features = n_features_seen.pop()
            _check_whole_queries([info[0] for info in infos])
            # Empty partitions contribute nothing; leave them out of every iteration.
            parts = [p for p, info in zip(parts, infos) if info[1] > 0]
            problem = _core.ProblemSummary.merge([info[3] for info in infos])
            problem.require_usable(config.relevance_threshold)
            on_parts = _Rounds(client, parts, self.n_jobs)
            watch = watching(
                self,
                X,
                y,
                n_features,
                n_threads(self.n_jobs),
                **watch_args,
                prepare=_dask_sets(client, self.n_jobs, eval_parts),
            )
            column_std = _merged_std([(info[1], *info[4]) for info in infos if info[1] > 0])
            with _progress_logging(self.verbose), overflow_named(config.C, None, lambda: column_std):
                coef, summary = _core.solve(
                    lambda w: on_parts(_part_cut_sums, w),
                    n_features,
                    config,
                    problem,
                    watch.on_iteration,
                    with_coef=watch.needs_coef,
                )
                outcome = Outcome(
                    coef,
                    summary,
                    n_features,
                    names,
                    problem.total,
                    column_std=column_std,
                    # The degenerate rule of every fit, from each partition's scores on its worker.
                    spreads=lambda w: on_parts(_part_spread, w),
                    early=watch.early,
                    evals=watch.evals,
                )
                finish(self, outcome, stacklevel=3)
        finally:
            client.cancel(parts + eval_parts)

    def predict(self, X: Any, **lightgbm_kwargs: Any) -> Any:
        """Scores: a dask array (for a dask array ``X``, or a `BinnedPartitions` of one), a
        dask Series named "score" (for a dask DataFrame, or a `BinnedPartitions` of one)
        or a numpy array (for data in memory), in the row order of ``X``. LightGBM's
        ``predict`` arguments (``num_iteration`` ...) are refused as by ``svmmap.SVMMap``."""
        refuse_lightgbm_predict(f"svmmap.dask.{type(self).__name__}", lightgbm_kwargs, self)
        self._check_fitted()
        coef = self.coef_
        binner = None
        if isinstance(X, BinnedPartitions):
            binner = X.binner
            if binner.n_output_features_ != self.n_features_in_:
                raise ValueError(
                    f"X is binned into {binner.n_output_features_} features, but {type(self).__name__} "
                    f"was fitted with {self.n_features_in_} features"
                )
            X = X.source
        n_columns = self.n_features_in_ if binner is None else binner.n_features_in_
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != n_columns:
                raise ValueError(
                    f"X has shape {X.shape}, but {type(self).__name__} was fitted with {n_columns} features"
                )
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            return X.map_blocks(_predict_block, coef, self.n_jobs, binner, drop_axis=1, dtype=np.float64)
        if _is_dask_frame(X):
            from ._validation import check_feature_names

            if binner is None:
                check_feature_names(self, X)
            return X.map_partitions(_predict_frame, coef, self.n_jobs, binner, meta=("score", "f8"))
        return super().predict(X)

    def score(self, X: Any, y: Any, qid: Any = None, sample_weight: Any = None, *, group: Any = None) -> float:
        """Mean average precision of the predicted ranking (computed on the client), weighted
        by the queries' ``sample_weight`` when given; the queries are ``qid`` or LightGBM's
        ``group`` (as ``svmmap.SVMMap.score``)."""
        import dask

        from .estimator import query_mean

        if qid is None and group is None:
            check_qid(None, 0, required_by=f"{type(self).__name__}.score")
        scores, y, qid, sample_weight, group = dask.compute(self.predict(X), y, qid, sample_weight, group)
        scores = np.asarray(scores)
        qid = qid_of(None if qid is None else np.asarray(qid), group, scores.shape[0])
        return query_mean(
            "map",
            np.asarray(y),
            scores,
            np.asarray(qid),
            None if sample_weight is None else np.asarray(sample_weight),
            self.relevance_threshold,
        )

    def to_local(self) -> _LocalSVMMap:
        """A plain ``svmmap.SVMMap`` with the same parameters and fitted attributes."""
        self._check_fitted()
        local = _LocalSVMMap(**self.get_params(deep=False))
        for key, value in self.__dict__.items():
            if key.endswith("_") and not key.startswith("_"):
                setattr(local, key, value)
        return local
