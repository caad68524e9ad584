"""One partition of a distributed data set as its worker holds it (training and validation parts):
the collections cut into aligned partitions, the tasks run on each part (cut sums, scores,
summaries, predictions) and their merges on the client.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _core
from .._fit.degenerate import score_spread
from .._fit.evaluation_sets import (
    eval_set_message,
    labels_vary,
    memory_set,
)
from .._optional import load
from .._validation import check_labels, check_matrix, check_qid, n_threads, qid_of
from ._binning import BinnedPartitions, _binned_block
from ._collections import _check_whole_queries, _is_dask_array, _is_dask_frame, _row_blocks, _rows_of, _x_blocks


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
    from ..metrics import evaluate

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
    """The `_fit.evaluation_sets.SetPreparer` of a Dask fit: a validation set that is a Dask
    collection is prepared on the workers and scored there every round; one in memory is
    scored on the client, as ``svmmap.SVMMap`` scores it. The prepared partitions' futures are
    added to ``futures``, which the fit cancels when it ends."""
    delayed = load("dask", "svmmap.dask").delayed

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
        worker = load("distributed", "svmmap.dask").get_worker()
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
    pd = load("pandas", "svmmap.dask.SVMMap.predict")
    return pd.Series(_predict_block(frame, coef, n_jobs, binner), index=frame.index, name="score")


def _partitions(
    X: Any, y: Any, qid: Any, names: Tuple[str, str] = ("y", "qid"), x_name: str = "X"
) -> Tuple[list, list, list, Optional[np.ndarray]]:
    """X, y and qid (named ``x_name`` and ``names`` in messages) as three aligned lists of
    per-partition objects, and X's column names."""
    if isinstance(X, BinnedPartitions):
        delayed = load("dask", "svmmap.dask").delayed
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
