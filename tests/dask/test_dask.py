"""Distributed training on a local Dask cluster equals single-machine training."""

import pickle

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")

import svmmap  # noqa: E402
import svmmap.dask  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from svmmap.datasets import load_mq2008  # noqa: E402

# Starts a Dask cluster of worker processes.
pytestmark = [pytest.mark.slow, pytest.mark.dask]


@pytest.fixture(scope="module")
def client():
    # Worker processes (not threads), so that partitions, w and the cut sums really travel
    # through dask's serialization as they do on a cluster of machines.
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def query_chunks(qid, n_parts):
    """Row chunk sizes that cut the (query-contiguous) rows into n_parts at query boundaries."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    assert len(starts) == len(np.unique(qid)), "the test data must have contiguous queries"
    cuts = [0] + [int(starts[len(starts) * k // n_parts]) for k in range(1, n_parts)] + [len(qid)]
    return tuple(int(c) for c in np.diff(cuts))


def as_dask_arrays(X, y, qid, chunks):
    return (
        da.from_array(X, chunks=(chunks, X.shape[1])),
        da.from_array(y, chunks=(chunks,)),
        da.from_array(qid, chunks=(chunks,)),
    )


@pytest.fixture(scope="module")
def fold():
    # The first 200 queries of MQ2008's fold 1: enough for a real model, small to ship around.
    X, y, qid = load_mq2008(fold=1, split="train")
    end = int(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])[200])
    X, y, qid = X[:end], y[:end], qid[:end]
    return X, y, qid, query_chunks(qid, 3)


def assert_same_model(dist, local):
    # The same cutting-plane loop on cuts that differ only by the rounding of the sums
    # (partition by partition instead of in one pass), so the same iterates to ~1e-12.
    np.testing.assert_allclose(dist.coef_, local.coef_, rtol=0, atol=1e-8)
    assert dist.n_iter_ == local.n_iter_
    assert dist.objective_ == pytest.approx(local.objective_, rel=1e-10)
    assert dist.gap_ == pytest.approx(local.gap_, rel=1e-6, abs=1e-12)
    assert dist.n_queries_ == local.n_queries_
    assert dist.n_queries_skipped_ == local.n_queries_skipped_
    assert dist.stop_reason_ == local.stop_reason_
    assert len(dist.history_) == len(local.history_)
    # The columns' spreads are merged from the partitions' moments; the shares follow coef_.
    np.testing.assert_allclose(dist.feature_importances_, local.feature_importances_, rtol=1e-6, atol=1e-10)


def test_merged_std_is_the_std_of_the_union():
    # Partitions of very different sizes and means (a column near 10^4 in one of them), whose
    # variances a merge that ignored the means' distances, or weighted partitions equally,
    # would get wrong; against numpy over the union.
    from svmmap.dask import _merged_std

    rng = np.random.default_rng(3)
    blocks = [rng.normal(size=(n, 3)) * [1, 10, 1e-3] + shift for n, shift in ((5, 0), (400, 2), (37, 1e4))]
    parts = [(len(b), b.mean(axis=0), b.var(axis=0)) for b in blocks]
    np.testing.assert_allclose(_merged_std(parts), np.vstack(blocks).std(axis=0), rtol=1e-12)


@pytest.mark.parametrize("C", [1.0, 30.0])
def test_dask_array_fit_equals_single_machine(client, fold, C):
    X, y, qid, chunks = fold
    local = svmmap.SVMMap(C=C).fit(X, y, qid=qid)
    dX, dy, dqid = as_dask_arrays(X, y, qid, chunks)
    dist = svmmap.dask.SVMMap(C=C).fit(dX, dy, qid=dqid)
    assert_same_model(dist, local)
    # predict on dask data is lazy and gives the local scores, in row order.
    dX = da.from_array(X, chunks=(chunks, 23))  # split features too: they are joined per row
    np.testing.assert_allclose(dist.predict(dX).compute(), local.predict(X), rtol=0, atol=1e-9)
    assert dist.score(dX, y, qid=qid) == pytest.approx(local.score(X, y, qid=qid), abs=1e-12)


def test_dask_dataframe_fit_equals_single_machine(client, fold):
    X, y, qid, chunks = fold
    columns = [f"f{j + 1}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=columns)
    frame["label"] = y
    frame["qid"] = qid
    bounds = np.cumsum((0,) + chunks)
    # One pandas piece per partition, cut at query boundaries.
    ddf = dd.concat([dd.from_pandas(frame.iloc[a:b], npartitions=1) for a, b in zip(bounds[:-1], bounds[1:])])
    assert ddf.npartitions == 3
    local = svmmap.SVMMap(C=10.0).fit(frame[columns], y, qid=qid)
    dist = svmmap.dask.SVMMap(C=10.0).fit(ddf[columns], ddf["label"], qid=ddf["qid"])
    assert_same_model(dist, local)
    assert list(dist.feature_names_in_) == columns
    scores = dist.predict(ddf[columns]).compute()
    np.testing.assert_allclose(scores.to_numpy(), local.predict(frame[columns]), rtol=0, atol=1e-9)


def test_numpy_labels_are_cut_like_X(client, fold):
    X, y, qid, chunks = fold
    dX = da.from_array(X, chunks=(chunks, X.shape[1]))
    local = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid)
    assert_same_model(svmmap.dask.SVMMap(C=1.0).fit(dX, y, qid=qid), local)


def test_lightgbm_s_group_and_sample_weight(client, fold):
    """fit(group=...) and fit(sample_weight=...) gave Python's bare "unexpected keyword
    argument". LightGBM's query sizes now make the query ids of a dask array's rows, the same
    model as the in-memory fit with group; sample_weight is refused saying where it works."""
    X, y, qid, chunks = fold
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    sizes = np.diff(np.r_[starts, len(qid)])  # LightGBM's group: the query sizes in row order
    dX, dy, dqid = as_dask_arrays(X, y, qid, chunks)
    local = svmmap.SVMMap(C=10.0).fit(X, y, group=sizes)
    assert_same_model(svmmap.dask.SVMMap(C=10.0).fit(dX, dy, group=sizes), local)
    assert_same_model(svmmap.dask.SVMMap(C=10.0).fit(dX, dy, group=da.from_array(sizes)), local)
    with pytest.raises(ValueError, match="not both"):
        svmmap.dask.SVMMap(C=10.0).fit(dX, dy, qid=dqid, group=sizes)
    with pytest.raises(
        TypeError, match=r"does not take sample_weight: .*svmmap\.SVMMap\(\.\.\.\)\.fit\(.*sample_weight=w\)"
    ):
        svmmap.dask.SVMMap(C=10.0).fit(dX, dy, qid=dqid, sample_weight=np.ones(len(y)))
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=1)
    with pytest.raises(TypeError, match=r"group= .*with a dask array X only: for a dask DataFrame give .* as qid="):
        svmmap.dask.SVMMap(C=10.0).fit(frame, dy, group=sizes)


def test_a_query_split_across_partitions_is_an_error(client, fold):
    X, y, qid, chunks = fold
    # Move the first boundary one row into the next query.
    bad = (chunks[0] + 1, chunks[1] - 1, chunks[2])
    with pytest.raises(ValueError, match=r"query .* has rows in partitions \[0, 1\].*whole queries"):
        svmmap.dask.SVMMap().fit(*as_dask_arrays(X, y, qid, bad))


def test_mismatched_partitions_are_an_error(client, fold):
    X, y, qid, chunks = fold
    frame = pd.DataFrame(X)
    ddf = dd.from_pandas(frame, npartitions=3, sort=False)
    with pytest.raises(ValueError, match="partitions but X has"):
        svmmap.dask.SVMMap().fit(
            ddf,
            dd.from_pandas(pd.Series(y), npartitions=2, sort=False),
            qid=dd.from_pandas(pd.Series(qid), npartitions=3, sort=False),
        )
    with pytest.raises(ValueError, match="needs qid="):
        svmmap.dask.SVMMap().fit(*as_dask_arrays(X, y, qid, chunks)[:2])
    with pytest.raises(TypeError, match="dask array or dask DataFrame"):
        svmmap.dask.SVMMap().fit(X, y, qid=qid)


def test_callback_stops_distributed_training(client, fold):
    X, y, qid, chunks = fold
    seen = []

    def stop_at_three(record):
        seen.append(record["iteration"])
        return record["iteration"] == 3

    model = svmmap.dask.SVMMap(C=100.0, callback=stop_at_three).fit(*as_dask_arrays(X, y, qid, chunks))
    assert seen == [1, 2, 3] and model.n_iter_ == 3 and model.stop_reason_ == "callback"


def test_same_parameters_pickle_and_to_local(client, fold):
    X, y, qid, chunks = fold
    assert svmmap.dask.SVMMap._get_param_names() == svmmap.SVMMap._get_param_names()
    model = svmmap.dask.SVMMap(C=1.0)
    model.client = client
    model.fit(*as_dask_arrays(X, y, qid, chunks))
    # The client is a live connection and is not pickled.
    restored = pickle.loads(pickle.dumps(model))
    assert restored.client is None
    np.testing.assert_array_equal(restored.coef_, model.coef_)
    local = model.to_local()
    assert type(local) is svmmap.SVMMap and local.get_params() == model.get_params()
    np.testing.assert_array_equal(local.predict(X), model.predict(X))
    np.testing.assert_array_equal(local.feature_importances_, model.feature_importances_)


def test_pairwise_on_mq2008_equals_single_machine(client, fold):
    # Every MQ2008 query with two distinct labels has a label-0 document, so the partitions'
    # binary query counts are the queries the graded pairwise loss uses (README, "Graded pairs").
    X, y, qid, chunks = fold
    local = svmmap.SVMMap(C=10.0, loss="pairwise").fit(X, y, qid=qid)
    dist = svmmap.dask.SVMMap(C=10.0, loss="pairwise").fit(*as_dask_arrays(X, y, qid, chunks))
    assert_same_model(dist, local)


def test_pairwise_counts_queries_without_a_label_zero_like_one_machine(client):
    # A third of the queries have labels 1 and 2 only: no non-relevant document, so the binary
    # rule skips them, but the graded pairwise loss uses them (two distinct labels), and
    # SVMMap counts them in n. The partitions must count them too, or C/n and the cut differ.
    rng = np.random.default_rng(0)
    n_queries, per = 30, 10
    X = rng.standard_normal((n_queries * per, 5))
    qid = np.repeat(np.arange(n_queries), per)
    y = rng.integers(0, 3, size=len(qid)).astype(float)
    graded_only = qid < 10
    y[graded_only] = rng.integers(1, 3, size=graded_only.sum())
    local = svmmap.SVMMap(C=1.0, loss="pairwise").fit(X, y, qid=qid)
    assert local.n_queries_ == 30
    dist = svmmap.dask.SVMMap(C=1.0, loss="pairwise").fit(*as_dask_arrays(X, y, qid, 100))
    assert_same_model(dist, local)


def tied_missing_data(seed=0, n_rows=3000):
    """Columns that stress the threshold fit: many ties (a point mass at zero), few distinct
    values, a constant column, a continuous heavy-tailed one, NaN for missing values, negative
    zeros, in float32."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            np.where(rng.random(n_rows) < 0.6, 0.0, rng.exponential(3.0, n_rows)),
            rng.integers(0, 4, n_rows).astype(float),
            np.full(n_rows, 2.5),
            rng.lognormal(0.0, 2.0, n_rows),
            np.where(rng.random(n_rows) < 0.3, np.nan, rng.normal(size=n_rows)),
            np.where(rng.random(n_rows) < 0.5, -0.0, rng.normal(size=n_rows).round(1)),
        ]
    ).astype(np.float32)
    return X


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
@pytest.mark.parametrize("n_thresholds", [3, 50])
def test_dask_binner_fits_the_in_memory_thresholds(client, strategy, n_thresholds):
    # The exact merge of the partitions' distinct values and counts gives the column that the
    # in-memory fit sorts, so the thresholds must be equal bit for bit, whatever the partitions.
    X = tied_missing_data()
    local = svmmap.Binner(n_thresholds=n_thresholds, strategy=strategy, missing="indicator").fit(X)
    for chunks in [(1000, 1000, 1000), (1, 2998, 1), (3000,)]:
        dist = svmmap.dask.Binner(n_thresholds=n_thresholds, strategy=strategy, missing="indicator")
        dist.fit(da.from_array(X, chunks=(chunks, 2)))
        assert dist.n_features_in_ == local.n_features_in_
        assert dist.n_output_features_ == local.n_output_features_
        for a, b in zip(dist.thresholds_, local.thresholds_):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    # A dask DataFrame keeps its column names, as the in-memory binner does for pandas.
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    dist = svmmap.dask.Binner(n_thresholds=n_thresholds, strategy=strategy, missing="indicator")
    dist.fit(dd.from_pandas(frame, npartitions=4, sort=False))
    assert list(dist.feature_names_in_) == list(frame.columns)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(dist.thresholds_, local.thresholds_))


def test_dask_binner_refuses_what_the_in_memory_one_refuses(client):
    X = tied_missing_data()
    dX = da.from_array(X, chunks=((1000, 1000, 1000), 6))
    # NaN without missing="indicator", and infinity always, named with their partition.
    # (Whichever partition a worker checks first is named; the row is X's.)
    with pytest.raises(ValueError, match=r"X\[\d+, 4\] is NaN: missing values need .*\(partition \d, its row \d+\)"):
        svmmap.dask.Binner().fit(dX)
    bad = X.copy()
    bad[1500, 3] = np.inf
    with pytest.raises(
        ValueError, match=r"X\[1500, 3\] is inf: features must be finite numbers \(partition 1, its row 500\)"
    ):
        svmmap.dask.Binner(missing="indicator").fit(da.from_array(bad, chunks=((1000, 1000, 1000), 6)))
    with pytest.raises(NotFittedError):
        svmmap.dask.Binner().transform(dX)


def test_binned_model_trains_on_the_cluster(client, fold):
    # Binned training on the cluster: thresholds from the dask binner, each partition binned on
    # its worker, the same model as the in-memory pipeline up to the order of the sums.
    from sklearn.pipeline import make_pipeline

    X, y, qid, chunks = fold
    X = X.astype(np.float32)
    dX, dy, dqid = as_dask_arrays(X, y, qid, chunks)
    binner = svmmap.dask.Binner(n_thresholds=20).fit(dX)
    binned = binner.transform(dX)
    assert isinstance(binned, svmmap.dask.BinnedPartitions) and binned.npartitions == 3
    dist = svmmap.dask.SVMMap(C=10.0).fit(binned, dy, qid=dqid)
    pipe = make_pipeline(svmmap.Binner(n_thresholds=20), svmmap.SVMMap(C=10.0)).fit(X, y, svmmap__qid=qid)
    assert_same_model(dist, pipe[-1])
    np.testing.assert_allclose(dist.predict(binned).compute(), pipe.predict(X), rtol=0, atol=1e-9)
    assert dist.score(binned, y, qid=qid) == pytest.approx(pipe[-1].score(pipe[0].transform(X), y, qid=qid), abs=1e-12)
    # In-memory data still goes through the plain binner.
    assert binner.transform(X).shape == pipe[0].transform(X).shape


def test_each_partition_is_prepared_once(fold, monkeypatch):
    # The core's problem of a partition (checked matrix, groups, oracles, counts) is built once
    # where the partition lives, not at every iteration. Threads in this process, so that the
    # count is seen.
    X, y, qid, chunks = fold
    real = svmmap._core.Partition
    built = []

    def counting(*args):
        built.append(len(args))
        return real(*args)

    monkeypatch.setattr(svmmap._core, "Partition", counting)
    with (
        distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):
        model = svmmap.dask.SVMMap(C=30.0).fit(*as_dask_arrays(X, y, qid, chunks))
    assert model.n_iter_ > 3
    assert len(built) == len(chunks)


def test_a_prepared_partition_pickles_to_the_same_cut_sums(fold):
    from svmmap._validation import check_labels, check_matrix, check_qid

    X, y, qid, _ = fold
    core_X, n, d = check_matrix(X)
    codes, uniques = check_qid(qid, n)
    config = svmmap._core.TrainConfig(loss=["map", "pairwise"])
    part = svmmap._core.Partition(core_X, check_labels(y, n), codes, len(uniques), config)
    again = pickle.loads(pickle.dumps(part))
    w = np.linspace(-1.0, 1.0, d)
    for (b1, g1), (b2, g2) in zip(part.cut_sums(w, 1), again.cut_sums(w, 2)):
        assert b1 == b2 and np.array_equal(g1, g2)
    assert (
        again.counts
        == part.counts
        == svmmap._core.problem_summary(check_labels(y, n), codes, len(uniques), 0.0, config)
    )


def test_a_zero_model_on_the_cluster_is_reported(client, fold):
    # Features that are zero everywhere: w = 0 is the optimum of any loss.
    X, y, qid, chunks = fold
    with pytest.warns(svmmap.DegenerateModelWarning, match="w = 0"):
        model = svmmap.dask.SVMMap(C=10.0).fit(*as_dask_arrays(np.zeros_like(X), y, qid, chunks))
    assert model.degenerate_ and not np.any(model.coef_)


def test_partitions_without_rows_are_left_out(client, fold):
    # A dask array filtered by a mask often has empty partitions: first, between and last
    # here. The fit, the importances, predict and the binned path are those of the same data
    # without them (the empty partitions were refused when prepared before).
    X, y, qid, chunks = fold
    with_empty = (0, chunks[0], 0, *chunks[1:], 0)
    dX, dy, dqid = as_dask_arrays(X, y, qid, with_empty)
    local = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid)
    dist = svmmap.dask.SVMMap(C=1.0).fit(dX, dy, qid=dqid)
    assert_same_model(dist, local)
    np.testing.assert_allclose(dist.predict(dX).compute(), local.predict(X), rtol=0, atol=1e-9)
    binner = svmmap.dask.Binner(n_thresholds=10).fit(dX)
    np.testing.assert_array_equal(
        np.concatenate(binner.thresholds_), np.concatenate(svmmap.Binner(n_thresholds=10).fit(X).thresholds_)
    )
    binned = svmmap.dask.SVMMap(C=1.0).fit(binner.transform(dX), dy, qid=dqid)
    in_memory = svmmap.SVMMap(C=1.0).fit(binner.to_local().transform(X), y, qid=qid)
    assert_same_model(binned, in_memory)
    assert binned.predict(binner.transform(dX)).compute().shape == (len(y),)


def test_a_failed_refit_leaves_the_dask_estimators_unfitted(client, fold):
    """Issue 36: a refit clears the previous fit before any work. Each Dask estimator is fitted,
    then refitted on input it refuses (NaN features, a loss refused for Dask, partitions of
    different widths); afterwards no fitted attribute is left (they used to keep the old model
    and thresholds)."""
    X, y, qid, chunks = fold
    dX, dy, dq = as_dask_arrays(X, y, qid, chunks)
    bad = X.copy()
    bad[3, 1] = np.nan
    bX, _, _ = as_dask_arrays(bad, y, qid, chunks)
    refits = [
        (lambda: svmmap.dask.SVMMap(), lambda m: m.fit(dX, dy, qid=dq), lambda m: m.fit(bX, dy, qid=dq)),
        (
            lambda: svmmap.dask.SVMMap(),
            lambda m: m.fit(dX, dy, qid=dq),
            lambda m: m.set_params(loss="ndcg@10:latent").fit(dX, dy, qid=dq),
        ),
        (lambda: svmmap.dask.Binner(), lambda m: m.fit(dX), lambda m: m.fit(bX)),
        (lambda: svmmap.dask.Binner(), lambda m: m.fit(dX), lambda m: m.fit(bad)),
    ]
    for make, fit, refit in refits:
        model = fit(make())
        assert any(k.endswith("_") and not k.startswith("_") for k in vars(model))
        with pytest.raises(ValueError):
            refit(model)
        left = [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]
        assert not left, left


def test_the_dask_fit_ends_as_every_fit_does(client, fold, monkeypatch):
    """Issue 38's one orchestrator: a Dask fit that fails after its solve (a ConvergenceWarning
    made an error) leaves no fitted attribute, as SVMMap.fit; and a model that ranks nothing is
    told apart by the rule of every fit, with the scores computed on the workers: a nonzero
    model whose scores tie within every query is degenerate (it used to count only w = 0)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, qid, chunks = fold
    dX, dy, dq = as_dask_arrays(X, y, qid, chunks)
    model = svmmap.dask.SVMMap(max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(dX, dy, qid=dq)
    assert hasattr(model, "coef_")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            model.fit(dX, dy, qid=dq)
    assert not [k for k in vars(model) if k.endswith("_") and not k.startswith("_")]

    # A model is degenerate exactly when its scores tie within every training query: the
    # solver's model is replaced, before the fit ends, by one on the first feature, which is
    # constant within each query, by one that also weighs a real feature, and by w = 0.
    const = np.column_stack([qid.astype(np.float64), X[:, :1]])
    cX, _, _ = as_dask_arrays(const, y, qid, chunks)
    original = svmmap.dask.finish
    for w, expected in ((np.array([1.0, 0.0]), True), (np.array([1.0, 1.0]), False), (np.zeros(2), True)):

        def finish(model, outcome, *, stacklevel=1, w=w):
            outcome.coef = w
            return original(model, outcome, stacklevel=stacklevel + 1)

        monkeypatch.setattr(svmmap.dask, "finish", finish)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = svmmap.dask.SVMMap(max_iter=3).fit(cX, dy, qid=dq)
        assert fitted.degenerate_ is expected, w


def test_each_round_sends_one_task_per_worker_over_its_partitions_in_partition_order():
    """Issue 37: 8 partitions on 2 workers paid the scheduler's round trip 8 times per round.
    The partitions are grouped by the worker that holds them (the first of several holders; a
    partition no worker holds is placed alone), each group in partition order."""
    from types import SimpleNamespace

    from svmmap.dask import _batches_by_worker

    parts = [SimpleNamespace(key=f"p{i}") for i in range(6)]
    holders = {"p0": {"b"}, "p1": {"a"}, "p2": {"b", "a"}, "p3": set(), "p4": {"b"}, "p5": {"a"}}
    batches = _batches_by_worker(holders, parts)
    assert sorted(map(tuple, (indices for _, indices in batches))) == [(0, 4), (1, 2, 5), (3,)]
    assert (["a"], [1, 2, 5]) in batches and (["b"], [0, 4]) in batches and (None, [3]) in batches
    # Every partition is in exactly one batch.
    assert sorted(i for _, indices in batches for i in indices) == list(range(6))


def test_a_ga2m_trains_on_the_cluster_with_pairs_chosen_in_memory(client, fold):
    # Pairs are chosen on data in memory (the dask Binner refuses interactions on Dask
    # collections); the fitted binner then bins every partition on its worker, pair codes
    # included, and the cluster trains the in-memory pipeline's model.
    from sklearn.pipeline import make_pipeline

    X, y, qid, chunks = fold
    X = X.astype(np.float32)
    dX, dy, dqid = as_dask_arrays(X, y, qid, chunks)
    pairs = [(4, 28), (14, 22)]
    binner = svmmap.dask.Binner(n_thresholds=20, interactions=pairs, interaction_bins=6).fit(X, y, qid=qid)
    assert binner.interactions_ == pairs
    dist = svmmap.dask.SVMMap(C=10.0).fit(binner.transform(dX), dy, qid=dqid)
    pipe = make_pipeline(svmmap.Binner(n_thresholds=20, interactions=pairs, interaction_bins=6), svmmap.SVMMap(C=10.0))
    pipe.fit(X, y, binner__qid=qid, svmmap__qid=qid)
    assert pipe[0].interactions_ == binner.interactions_
    assert_same_model(dist, pipe[-1])
    np.testing.assert_allclose(dist.predict(binner.transform(dX)).compute(), pipe.predict(X), rtol=0, atol=1e-9)


@pytest.fixture(scope="module")
def vali():
    # MQ2008's fold 1 validation queries, in two partitions cut at a query boundary.
    X, y, qid = load_mq2008(fold=1, split="vali")
    return X, y, qid, query_chunks(qid, 2)


def fit_watched(model, X, y, qid, sets, early_stopping_rounds=None):
    """``model.fit`` with validation sets [(X, y, qid), ...] and LightGBM's callbacks, which
    stop early (after 5 rounds without a better first metric on a set, unless
    early_stopping_rounds is given instead), print to stdout (log_evaluation) and fill a dict
    (record_evaluation); returns the dict."""
    recorded = {}
    early = [] if early_stopping_rounds else [svmmap.early_stopping(5, first_metric_only=True, verbose=False)]
    model.fit(
        X,
        y,
        qid=qid,
        eval_X=tuple(s[0] for s in sets),
        eval_y=tuple(s[1] for s in sets),
        eval_qid=[s[2] for s in sets],
        eval_metric=["ndcg@10", "map"],
        early_stopping_rounds=early_stopping_rounds,
        callbacks=[*early, svmmap.log_evaluation(1), svmmap.record_evaluation(recorded)],
    )
    return recorded


@pytest.mark.parametrize("where", ["dask", "memory"])
def test_early_stopping_on_the_cluster_keeps_the_in_memory_model(client, fold, vali, where, capsys):
    # The same solver path (iterates equal to rounding) scored on the same validation set
    # gives the same curves, so early stopping keeps the same round: the Dask model equals the
    # in-memory one with the same callbacks. The validation set is scored on the workers
    # (where="dask") or on the client (a set in memory); its metric means are averaged in the
    # order evaluate() averages them, so the curves agree to rounding of the scores.
    X, y, qid, chunks = fold
    Xv, yv, qv, vchunks = vali
    # C large enough that validation NDCG@10 peaks before the certificate.
    local = svmmap.SVMMap(C=100.0)
    expected = fit_watched(local, X, y, qid, [(Xv, yv, qv)])
    printed = capsys.readouterr().out
    assert local.stop_reason_ == "callback" and local.best_iteration_ < local.n_iter_
    # One line per round, as LightGBM's log_evaluation prints.
    assert printed.count("\n") == local.n_iter_ and printed.startswith("[1]\tvalid_0's ndcg@10: ")

    valid = as_dask_arrays(Xv, yv, qv, vchunks) if where == "dask" else (Xv, yv, qv)
    dist = svmmap.dask.SVMMap(C=100.0)
    recorded = fit_watched(dist, *as_dask_arrays(X, y, qid, chunks), [valid])
    assert_same_model(dist, local)
    assert dist.best_iteration_ == local.best_iteration_
    assert capsys.readouterr().out.count("\n") == dist.n_iter_
    assert list(recorded) == ["valid_0"] and recorded == dist.evals_result_
    for metric in ("ndcg@10", "map"):
        np.testing.assert_allclose(recorded["valid_0"][metric], expected["valid_0"][metric], rtol=0, atol=1e-12)
        assert dist.best_score_["valid_0"][metric] == pytest.approx(local.best_score_["valid_0"][metric], abs=1e-12)


def test_the_training_set_is_never_watched_on_the_cluster(client, fold, vali, capsys):
    # The training collections themselves as the first validation set (the very X and y
    # given to fit) are scored and recorded as "training", but early stopping never watches
    # them: early_stopping_rounds watches the first metric of the first watched set, here the
    # validation set, so the model is the one watching the validation set alone (with the
    # training NDCG@10 watched instead, this fit kept round 10 of 15, not 3 of 8). With the
    # training set alone there is nothing to watch, as for svmmap.SVMMap.
    X, y, qid, chunks = fold
    dX, dy, dq = as_dask_arrays(X, y, qid, chunks)
    valid = as_dask_arrays(*vali)
    alone = svmmap.dask.SVMMap(C=100.0)
    fit_watched(alone, dX, dy, dq, [valid], early_stopping_rounds=5)
    both = svmmap.dask.SVMMap(C=100.0)
    recorded = fit_watched(both, dX, dy, dq, [(dX, dy, dq), valid], early_stopping_rounds=5)
    assert list(recorded) == ["training", "valid_1"]
    assert list(both.best_score_) == ["training", "valid_1"]
    np.testing.assert_array_equal(both.coef_, alone.coef_)
    assert (both.n_iter_, both.best_iteration_) == (alone.n_iter_, alone.best_iteration_)
    # The training curve is the in-memory model's training curve, scored on the workers.
    local = svmmap.SVMMap(C=100.0)
    expected = fit_watched(local, X, y, qid, [(X, y, qid), vali[:3]], early_stopping_rounds=5)
    np.testing.assert_allclose(recorded["training"]["map"], expected["training"]["map"], rtol=0, atol=1e-12)
    capsys.readouterr()
    with pytest.raises(ValueError, match="every eval set is the training data itself"):
        svmmap.dask.SVMMap(C=100.0).fit(
            dX, dy, qid=dq, eval_set=[(dX, dy)], eval_qid=[dq], callbacks=[svmmap.early_stopping(5)]
        )


def test_a_dask_validation_set_is_checked_like_the_training_data(client, fold, vali):
    X, y, qid, chunks = fold
    Xv, yv, qv, vchunks = vali
    dX, dy, dq = as_dask_arrays(X, y, qid, chunks)
    fit = svmmap.dask.SVMMap(C=1.0).fit
    dXv, dyv, dqv = as_dask_arrays(Xv, yv, qv, vchunks)
    # Query sizes cannot be cut along the partitions: the ids are asked for instead.
    with pytest.raises(ValueError, match=r"eval_set\[0\] is a Dask collection: give its query ids as eval_qid"):
        fit(dX, dy, qid=dq, eval_set=[(dXv, dyv)], eval_group=[np.bincount(np.unique(qv, return_inverse=True)[1])])
    # A validation query split between partitions, named with its set.
    bad = (vchunks[0] + 1, vchunks[1] - 1)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: query .* has rows in partitions \[0, 1\]"):
        fit(
            dX,
            dy,
            qid=dq,
            eval_set=[as_dask_arrays(Xv, yv, qv, bad)[:2]],
            eval_qid=[as_dask_arrays(Xv, yv, qv, bad)[2]],
        )
    with pytest.raises(ValueError, match=r"eval_set\[0\] has 45 features, but X has 46"):
        fit(dX, dy, qid=dq, eval_set=[(dXv[:, 1:], dyv)], eval_qid=[dqv])
    # A NaN feature fails before training, under the validation set's names and partition.
    nan = Xv.copy()
    nan[vchunks[0] + 3, 5] = np.nan
    with pytest.raises(ValueError, match=r"eval_set\[0\] X\[3, 5\] is NaN.*\(partition 1\)"):
        fit(dX, dy, qid=dq, eval_set=[(as_dask_arrays(nan, yv, qv, vchunks)[0], dyv)], eval_qid=[dqv])
    # LightGBM's other fit arguments get the svmmap equivalent, as in svmmap.SVMMap.fit.
    with pytest.raises(TypeError, match="does not take LightGBM's 'init_model'"):
        fit(dX, dy, qid=dq, init_model="model.txt")
