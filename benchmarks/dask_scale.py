"""The Dask fit against the in-memory fit at MSLR-WEB30K's training-fold shape, and a cost model
of larger clusters built from what this run measures.

The data (make_ranking, 18,919 queries of about 120 documents, 136 features, float32: the shape
of an MSLR-WEB30K training fold) is made twice from the same seeds: once in this process for
``svmmap.SVMMap(n_jobs=2)``, and once on the workers of a LocalCluster of 2 worker processes with
1 thread each, one partition per --partitions, persisted there before the clock starts (a
cluster's data lives on its workers; shipping it there is not part of a fit). Both fits use the
same C and eps. The script prints:

- the two fit times, their ratio and the largest difference between the two models' weights;
- the per-round traffic (a round is one oracle pass over every partition; OCAS-style iterations
  take one or two): the bytes of w sent to each partition and of the cut sums each
  partition sends back (measured by pickling them as Dask does), which is
  O(features x slack groups) and independent of the partition's size;
- what a round costs here: one partition's oracle pass on its worker (1 thread), the round trip
  of a task per partition that does nothing, and the client's share (cutting-plane loop and QP);
- a cost model for 8 to 64 workers: per-round time = the pass over one partition of n/P
  documents (the measured pass time per document) + a round trip of P tasks (a measured fixed
  cost plus a measured cost per task) + the client's share, times the measured round count.

    python benchmarks/dask_scale.py [--queries 18919] [--partitions 2] [--C 1]

Run it on an otherwise idle machine: both fits are timed in this one run.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
import warnings

import numpy as np
import svmmap
import svmmap.dask
import tables  # benchmarks/tables.py, beside this script
from svmmap.dask._parts import _part_cut_sums, _prepare
from svmmap.datasets import make_ranking


def say(text: str) -> None:
    """Progress, on stderr: stdout holds the tables."""
    print(text, file=sys.stderr, flush=True)


def partition(index: int, n_queries: int, docs: float, features: int, seed: int, stride: int):
    """One partition's documents; query ids start at index * stride (stride at least every
    partition's query count), so that partitions share no query."""
    X, y, qid = make_ranking(n_queries, docs, features, random_state=seed + index, dtype=np.float32)
    return X, y, qid.astype(np.int64) + index * stride


def _noop(index: int, w: np.ndarray) -> int:
    return index


def _pass_on_worker(part, w: np.ndarray, repeat: int):
    """One partition's oracle pass timed on its worker, and the bytes of its answer."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        sums = _part_cut_sums(part, w, 1)
        times.append(time.perf_counter() - start)
    return min(times), len(pickle.dumps(sums, protocol=5)), part.n_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=18919)
    parser.add_argument("--docs", type=float, default=120.0)
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--eps", type=float, default=None, help="default: the estimator's default")
    parser.add_argument("--seed", type=int, default=0)
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__)
    warnings.simplefilter("ignore", svmmap.SkippedQueriesWarning)
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    per_part = [args.queries // args.partitions + (i < args.queries % args.partitions) for i in range(args.partitions)]
    params = {"C": args.C} if args.eps is None else {"C": args.C, "eps": args.eps}

    pieces = [partition(i, q, args.docs, args.features, args.seed, args.queries) for i, q in enumerate(per_part)]
    X = np.concatenate([p[0] for p in pieces])
    y = np.concatenate([p[1] for p in pieces])
    qid = np.concatenate([p[2] for p in pieces])
    shapes = [p[0].shape for p in pieces]
    del pieces
    say(
        f"data: {X.shape[0]:,} documents x {X.shape[1]} features ({X.nbytes / 2**30:.2f} GiB float32), "
        f"{args.queries:,} queries, {args.partitions} partitions; C={args.C:g}"
    )

    start = time.perf_counter()
    local = svmmap.SVMMap(n_jobs=2, **params).fit(X, y, qid=qid)
    t_local = time.perf_counter() - start
    say(f"in memory, 2 threads: {t_local:.2f} s, {local.n_iter_} iterations")

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", memory_limit=0
        ) as cluster,
        Client(cluster) as client,
    ):
        made = [
            dask.delayed(partition, pure=True)(i, q, args.docs, args.features, args.seed, args.queries)
            for i, q in enumerate(per_part)
        ]
        dX = da.concatenate([da.from_delayed(m[0], shape=s, dtype=np.float32) for m, s in zip(made, shapes)])
        dy = da.concatenate([da.from_delayed(m[1], shape=(s[0],), dtype=y.dtype) for m, s in zip(made, shapes)])
        dq = da.concatenate([da.from_delayed(m[2], shape=(s[0],), dtype=np.int64) for m, s in zip(made, shapes)])
        dX, dy, dq = client.persist([dX, dy, dq])
        wait([dX, dy, dq])

        # Count the oracle rounds (passes over the partitions) of the fit: the cutting-plane
        # loop asks its cut source once per round, more than once in some iterations.
        solve = svmmap.dask._core.solve
        n_rounds = [0]

        def counting_solve(cut_source, *rest, **kw):
            def counted(w):
                n_rounds[0] += 1
                return cut_source(w)

            return solve(counted, *rest, **kw)

        svmmap.dask._core.solve = counting_solve
        start = time.perf_counter()
        model = svmmap.dask.SVMMap(n_jobs=1, **params).fit(dX, dy, qid=dq)
        t_dask = time.perf_counter() - start
        svmmap.dask._core.solve = solve
        diff = float(np.max(np.abs(model.coef_ - local.coef_)))

        costs = _round_costs(client, model, local, dX, dy, dq, args.partitions)

    _report(args, X.shape[0], t_local, model, t_dask, n_rounds[0], diff, costs)


def _round_costs(client, model, local, dX, dy, dq, n_partitions: int) -> dict:
    """What one round costs, measured on the same cluster with the partitions prepared as
    the fit prepares them: the preparation, one pass per partition, the bytes sent each way
    and the round trip of P empty tasks."""
    import dask
    from distributed import wait

    config = model._config()
    x_blocks, y_blocks, q_blocks = dX.to_delayed().ravel(), dy.to_delayed(), dq.to_delayed()
    start = time.perf_counter()
    parts = client.compute(
        [
            dask.delayed(_prepare, pure=False)(xb, yb, qb, i, config)
            for i, (xb, yb, qb) in enumerate(zip(x_blocks, y_blocks, q_blocks))
        ]
    )
    wait(parts)
    t_prepare = time.perf_counter() - start
    w = np.array(local.coef_, dtype=np.float64)
    passes = client.gather(client.map(_pass_on_worker, parts, w=w, repeat=3, pure=False))
    rounds = {}
    for n_tasks in (n_partitions, 8, 16, 32, 64):
        times = []
        for _ in range(7):
            start = time.perf_counter()
            client.gather(client.map(_noop, range(n_tasks), w=w, pure=False))
            times.append(time.perf_counter() - start)
        rounds[n_tasks] = statistics.median(times)
    client.cancel(parts)
    return {
        "groups": len(config.losses) if config.slack == "separate" else 1,
        "t_prepare": t_prepare,
        "w_bytes": len(pickle.dumps(w, protocol=5)),
        "pass_per_doc": statistics.median(t / n for t, _, n in passes),
        "answer_bytes": max(b for _, b, _ in passes),
        "t_pass_part": max(t for t, _, _ in passes),
        "rounds": rounds,
    }


def _report(args, n_docs: int, t_local: float, model, t_dask: float, passes_total: int, diff: float, costs: dict):
    """The two tables: the measurements, then the fit time they predict for P workers."""
    rounds, t_prepare, t_pass_part = costs["rounds"], costs["t_prepare"], costs["t_pass_part"]
    # Round trip of P tasks: a fixed cost plus a cost per task, fitted to the measurements.
    ps = np.array(sorted(rounds))
    per_task, fixed = np.polyfit(ps, np.array([rounds[p] for p in ps]), 1)
    # What the client does per round (the cutting-plane loop, its QP, adding the partitions'
    # sums), the rest of the fit's time once the rounds' passes and round trips are taken out.
    client_share = max((t_dask - t_prepare) / passes_total - t_pass_part - rounds[args.partitions], 0.0)
    print("| measure | value |")
    print("|---|---:|")
    print(f"| in memory, 2 threads: fit s (timing) | {t_local:.2f} |")
    print(f"| Dask, 2 worker processes x 1 thread: fit s (timing) | {t_dask:.2f} |")
    print(f"| Dask / in memory (timing) | **{t_dask / t_local:.2f}** |")
    print(f"| iterations (both) / oracle rounds of the Dask fit | {model.n_iter_} / {passes_total} |")
    print(f"| max abs(w_dask - w_local) | {diff:.1e} |")
    print(f"| preparation of the partitions, once per fit, s (timing) | {t_prepare:.2f} |")
    print(f"| per round and partition: w sent, bytes | {costs['w_bytes']:,} |")
    print(
        f"| per round and partition: cut sums back ({args.features} features x {costs['groups']} slack group), bytes | {costs['answer_bytes']:,} |"
    )
    print(
        f"| oracle pass of one partition ({n_docs // args.partitions:,} documents, 1 thread), ms (timing) | {t_pass_part * 1e3:.1f} |"
    )
    print(f"| round trip of {args.partitions} empty tasks, ms (timing) | {rounds[args.partitions] * 1e3:.1f} |")
    print(
        f"| round trip of P empty tasks, fitted over P = {', '.join(str(p) for p in ps)}, ms (timing) | {fixed * 1e3:.1f} + {per_task * 1e3:.2f} P |"
    )
    print(f"| client's share of a round (loop, QP, sums), ms (timing) | {client_share * 1e3:.1f} |")
    # A round sends one task per worker over the partitions it holds (svmmap.dask), so the
    # partitions per worker add their passes, not round trips.
    per_round_part = (t_dask - t_prepare) / passes_total / args.partitions
    print(
        f"| Dask fit per round and partition, (fit - preparation) / rounds / {args.partitions}, ms (timing) "
        f"| {per_round_part * 1e3:.1f} |"
    )
    print()
    print(
        "| workers P | documents per worker | pass ms (timing) | round trip ms (timing) | client ms (timing) "
        "| per round ms (timing) | fit s, with preparation (timing) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for P in (2, 8, 16, 32, 64):
        t_pass = costs["pass_per_doc"] * n_docs / P
        t_round = fixed + per_task * P
        per_round = t_pass + t_round + client_share
        prep = t_prepare * args.partitions / P
        print(
            f"| {P} | {n_docs // P:,} | {t_pass * 1e3:.1f} | {t_round * 1e3:.1f} | {client_share * 1e3:.1f} | "
            f"{per_round * 1e3:.1f} | {per_round * passes_total + prep:.2f} |"
        )


if __name__ == "__main__":
    main()
