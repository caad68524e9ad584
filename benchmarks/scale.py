"""Performance at scale: svmmap against the hardware floor, itself on fewer threads, LightGBM,
and scikit-learn's reader, every ratio measured in the same run.

    python benchmarks/scale.py                  # MSLR-WEB30K fold shape (about 2.27M x 136 float32)
    python benchmarks/scale.py --queries 2000   # a smaller shape
    python benchmarks/scale.py --only fit,threads --json out.json

Sections (each measurement runs in a fresh Python process, so that memory peaks are its own):

fit      SVMMap(loss="map", C=1, eps=1e-3) on make_ranking data of the training-fold shape of
         MSLR-WEB30K (3 of 5 folds: about 18,900 queries, 2.27M documents, 136 float32
         features). Reports wall time, iterations, the peak resident memory during fit over
         the size of X (the process's whole RSS, X included, with the peak counter reset just
         before fit), and the time of one cutting-plane iteration over one read of X (numpy's
         ``X @ w``) and over the floor of a two-pass method (``X @ w`` plus ``X.T @ c`` on the
         same array), float32 vectors so that numpy does not convert X (its BLAS uses every
         core), best of several runs each.
threads  The same fit with n_jobs=1 and on every core, alternating, best of two each: the
         speed-up. The models must be bit-identical (the script stops otherwise).
pass     Where one oracle pass of that fit spends its time: the Rust example
         examples/pass_cost.rs (built here with cargo) times a pass step by step (score X w,
         sort each query's two classes, the MAP oracle, the accumulation of X^T c) at the w of
         the fit, against one read of X, on every core; and the same steps on data that fits in
         cache (make_ranking(200, 120, 136)) on one core, which gives each step's compute per
         document without waiting for memory. From these it prints the budget that one
         iteration in 1.5 reads of X leaves per document (issue 15's target) against what the
         sort, the oracle and the accumulation need.
lightgbm MQ2008 fold 1: SVMMap(C=1) against LightGBM's LGBMRanker (lambdarank, its defaults),
         both on all cores, fit times and test MAP.
reader   A 200,000-line LETOR file (MSLR-shape lines: 136 features, written with 6 significant
         digits) and one of real MQ2008 lines repeated to 200,000 lines (46 features and the
         ``#docid = ...`` comments): svmmap.load_letor against
         sklearn.datasets.load_svmlight_file(query_id=True), best of three each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import tables  # benchmarks/tables.py, beside this script

# The child programs. Each prints one JSON object on its last line of output.
COMMON = r"""
import json, os, time, warnings
import numpy as np
warnings.simplefilter("ignore")

def rss_reset():
    # Writing 5 to clear_refs resets the kernel's peak-RSS counter (VmHWM) to the current RSS,
    # so that VmHWM afterwards is the peak of what follows, not of the data generation.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)

# Counts the oracle passes of every fit from here on (OCAS takes two in some iterations),
# from the core's summaries; returns the list each fit's count is appended to.
def count_passes():
    from svmmap import estimator
    fit_path, n_evals = estimator._core.fit_path, []
    def counting_fit(*a, **k):
        path = fit_path(*a, **k)
        n_evals.extend(summary.n_evals for _, summary in path)
        return path
    estimator._core.fit_path = counting_fit
    return n_evals
"""

FIT = (
    COMMON
    + r"""
import svmmap
from svmmap.datasets import make_ranking
args = json.loads(os.environ["SCALE_ARGS"])
n_evals = count_passes()
X, y, qid = make_ranking(args["queries"], args["docs"], args["features"], random_state=0)
# The floor: one pass of X @ w and one of X.T @ c, as numpy does them on the same array.
rng = np.random.default_rng(1)
w = rng.standard_normal(X.shape[1]).astype(X.dtype)
c = rng.standard_normal(X.shape[0]).astype(X.dtype)
floor, read = [], []
for _ in range(args["floor_repeats"]):
    t = time.perf_counter(); s = X @ w; read.append(time.perf_counter() - t)
    t = time.perf_counter(); s = X @ w; g = X.T @ c; floor.append(time.perf_counter() - t)
del s, g, c
# Peak-RSS counters include what the generator left in malloc's free lists; hand it back first.
import ctypes
ctypes.CDLL("libc.so.6").malloc_trim(0)
fits = []
for _ in range(args["repeats"]):  # alternate the thread counts, so that noise falls on all
    for n_jobs in args["n_jobs"]:
        rss_before = status("VmRSS")
        rss_reset()
        model = svmmap.SVMMap(C=args["C"], eps=args["eps"], n_jobs=n_jobs)
        t = time.perf_counter(); model.fit(X, y, qid=qid); seconds = time.perf_counter() - t
        h = model.history_
        per_iter = (h[-1]["seconds"] - h[0]["seconds"]) / (len(h) - 1) if len(h) > 1 else h[0]["seconds"]
        fits.append({
            "n_jobs": n_jobs, "seconds": seconds, "n_iter": int(model.n_iter_), "n_evals": n_evals[-1],
            "converged": bool(model.converged_), "first_iteration_seconds": h[0]["seconds"],
            "per_iteration": per_iter, "rss_before": rss_before, "peak_rss": status("VmHWM"),
            "coef": model.coef_.tolist(), "objective": model.objective_,
        })
        del model
print(json.dumps({
    "n_docs": int(X.shape[0]), "n_features": int(X.shape[1]), "n_queries": int(args["queries"]),
    "x_bytes": int(X.nbytes), "dtype": str(X.dtype), "floor": min(floor), "read": min(read),
    "fits": fits,
}))
"""
)

PASS_DATA = (
    COMMON
    + r"""
import svmmap
from svmmap.datasets import make_ranking
args = json.loads(os.environ["SCALE_ARGS"])
X, y, qid = make_ranking(args["queries"], args["docs"], args["features"], random_state=0)
# The oracle's work depends on w (where the relevant documents sort); take the fit's own,
# from the fit section when it ran on the same data, and otherwise fit here, counting the
# fit's oracle passes per iteration for the budget as the fit section does.
w, passes = args.get("w"), None
if w is None:
    n_evals = count_passes()
    model = svmmap.SVMMap(C=1.0, eps=1e-3).fit(X, y, qid=qid)
    w, passes = model.coef_, (n_evals[-1] - 1) / max(int(model.n_iter_) - 1, 1)
prefix = args["prefix"]
np.ascontiguousarray(X, dtype=np.float32).tofile(prefix + ".x")
np.asarray(y, dtype=np.float64).tofile(prefix + ".y")
np.unique(qid, return_inverse=True)[1].astype(np.int64).tofile(prefix + ".q")
np.asarray(w, dtype=np.float64).tofile(prefix + ".w")
print(json.dumps({"n_docs": int(X.shape[0]), "passes_per_iteration": passes}))
"""
)

LIGHTGBM = (
    COMMON
    + r"""
import lightgbm
import svmmap
from svmmap.datasets import load_mq2008
from svmmap.metrics import mean_average_precision
X, y, qid = load_mq2008(fold=1, split="train")
Xt, yt, qt = load_mq2008(fold=1, split="test")
out = {"n_docs": int(X.shape[0])}
_, sizes = np.unique(qid, return_counts=True)  # LETOR files keep a query's rows together
times = {"svmmap": [], "lightgbm": []}
for _ in range(5):
    t = time.perf_counter(); m = svmmap.SVMMap(C=1.0).fit(X, y, qid=qid); times["svmmap"].append(time.perf_counter() - t)
    t = time.perf_counter()
    r = lightgbm.LGBMRanker(objective="lambdarank", verbose=-1, n_jobs=os.cpu_count()).fit(X, y, group=sizes)
    times["lightgbm"].append(time.perf_counter() - t)
out["svmmap_seconds"] = min(times["svmmap"])
out["lightgbm_seconds"] = min(times["lightgbm"])
out["svmmap_map"] = mean_average_precision(yt, m.predict(Xt), qid=qt)
out["lightgbm_map"] = mean_average_precision(yt, r.predict(Xt), qid=qt)
print(json.dumps(out))
"""
)

READER = (
    COMMON
    + r"""
import svmmap
from sklearn.datasets import load_svmlight_file
path = os.environ["SCALE_FILE"]
out = {"bytes": os.path.getsize(path)}
for name, load in (
    ("svmmap", lambda: svmmap.load_letor(path)),
    ("sklearn", lambda: load_svmlight_file(path, query_id=True)),
):
    best = None
    for _ in range(3):
        t = time.perf_counter(); X, y, q = load(); dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    out[name] = best
    out[name + "_shape"] = list(X.shape)
    out[name + "_checksum"] = [float(np.asarray(X.sum())), float(y.sum())]
print(json.dumps(out))
"""
)


def run_child(program: str, env_extra: dict) -> dict:
    env = dict(os.environ, **env_extra)
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"benchmark child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fits(args, jobs: list, repeats: int) -> dict:
    """Fits on one generated data set, for each thread count in `jobs`, `repeats` times
    (alternating). Returns the shared measurements and, per thread count, the fastest fit."""
    r = run_child(
        FIT,
        {
            "SCALE_ARGS": json.dumps(
                {
                    "queries": args.queries,
                    "docs": args.docs,
                    "features": args.features,
                    "C": 1.0,
                    "eps": 1e-3,
                    "n_jobs": jobs,
                    "repeats": repeats,
                    "floor_repeats": 5,
                }
            )
        },
    )
    best = {}
    for f in r.pop("fits"):
        if f["n_jobs"] not in best or f["seconds"] < best[f["n_jobs"]]["seconds"]:
            best[f["n_jobs"]] = f
        # Every fit of a thread count must give the same model.
        if f["coef"] != best[f["n_jobs"]]["coef"] or f["coef"] != next(iter(best.values()))["coef"]:
            sys.exit("fits with different thread counts or repeats gave different models")
    r["best"] = best
    return r


def write_mslr_shape(path: str, n_lines: int) -> None:
    from svmmap.datasets import make_ranking

    X, y, qid = make_ranking(max(1, n_lines // 120), 120, 136, size_spread=0.0, random_state=0)
    X, y, qid = X[:n_lines], y[:n_lines], qid[:n_lines]
    with open(path, "w") as f:
        for lo in range(0, len(y), 10000):
            rows = []
            for i in range(lo, min(len(y), lo + 10000)):
                feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(X[i]))
                rows.append(f"{int(y[i])} qid:{qid[i] + 1} {feats}\n")
            f.writelines(rows)


def write_mq2008_repeated(path: str, n_lines: int) -> None:
    import gzip

    from svmmap.datasets import mq2008_path

    lines = []
    for s in range(1, 6):
        with gzip.open(mq2008_path(s), "rt") as f:
            lines.extend(f.readlines())
    with open(path, "w") as f:
        written, copy = 0, 0
        while written < n_lines:
            for line in lines[: n_lines - written]:
                # Each copy gets its own query ids, so that queries stay whole and distinct.
                label, q, rest = line.split(" ", 2)
                f.write(f"{label} qid:{int(q[4:]) + 100000 * copy} {rest}")
            written += min(len(lines), n_lines - written)
            copy += 1


HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = ("read", "score", "sort", "oracle", "pass")


def build_pass_cost() -> str:
    """Builds examples/pass_cost.rs with cargo; returns the binary's path."""
    if shutil.which("cargo") is None:
        sys.exit("the pass section needs cargo, to build examples/pass_cost.rs")
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    subprocess.run(["cargo", "build", "--quiet", "--release", "--example", "pass_cost"], cwd=HERE, check=True, env=env)
    return os.path.join(HERE, "target", "release", "examples", "pass_cost")


def pass_cost(binary: str, prefix: str, n_features: int, threads: int, repeats: int) -> dict:
    """Runs the pass_cost binary on the data at `prefix`; returns its JSON line."""
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    proc = subprocess.run(
        [binary, prefix, str(n_features), str(repeats)],
        capture_output=True,
        text=True,
        env=dict(env, RAYON_NUM_THREADS=str(threads)),
    )
    if proc.returncode != 0:
        sys.exit(f"pass_cost failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def pass_section(args, cores: int, passes_per_iteration: float | None, w: list | None) -> dict:
    """The `pass` section: each step of a pass at the benchmark's shape on every core, and
    in cache on one core, with the budget of issue 15's target. `w` and
    `passes_per_iteration`: the fit section's at this shape (None: fitted here)."""
    out = {}
    binary = build_pass_cost()
    with tempfile.TemporaryDirectory() as tmp:
        for name, queries, threads, repeats in (
            ("shape", args.queries, cores, 7),
            ("cache", 200, 1, 300),
        ):
            prefix = os.path.join(tmp, name)
            shape = {"queries": queries, "docs": args.docs, "features": args.features, "prefix": prefix}
            if name == "shape":
                shape["w"] = w
            made = run_child(PASS_DATA, {"SCALE_ARGS": json.dumps(shape)})
            if name == "shape" and passes_per_iteration is None:
                passes_per_iteration = made["passes_per_iteration"]
            out[name] = pass_cost(binary, prefix, args.features, threads, repeats)
            for ext in ("x", "y", "q", "w"):
                os.remove(f"{prefix}.{ext}")
    big, small = out["shape"], out["cache"]
    print(
        f"\n## One oracle pass step by step (loss map, w of the fit; examples/pass_cost.rs)\n\n"
        f"Each step adds to the one before; 'in cache' is make_ranking(200, {args.docs:g}, {args.features}) "
        f"({200 * args.docs * args.features * 4 / 1e6:.0f} MB of float32) on one core, best of 300.\n"
    )
    print(
        f"| step | {big['documents']:,} documents, {cores} threads (ms) | / read | in cache, one core (ns per document) |"
    )
    print("|---|---:|---:|---:|")
    # Per document in cache: read and score on their own, each later step as what it adds.
    ns = {step: 1e9 * small[step] / small["documents"] for step in STEPS}
    for later, earlier in (("pass", "oracle"), ("oracle", "sort"), ("sort", "score")):
        ns[later] -= 1e9 * small[earlier] / small["documents"]
    labels = {"sort": "+ sort", "oracle": "+ MAP oracle", "pass": "+ accumulation (the whole pass)"}
    for step in STEPS:
        print(f"| {labels.get(step, step)} | {1e3 * big[step]:.1f} | {big[step] / big['read']:.2f} | {ns[step]:.1f} |")
    read_ns = 1e9 * big["read"] / big["documents"]
    # One iteration in 1.5 reads of X is 1.5 * read_ns of wall time per document, shared by
    # the iteration's passes; on `cores` cores that is `cores` times as much compute.
    budget = cores * 1.5 * read_ns / passes_per_iteration
    need = ns["sort"] + ns["oracle"] + ns["pass"]
    print("\n| target: an iteration in 1.5 reads of X | ns per document |\n|---|---:|")
    print(f"| one read of X, {cores} threads | {read_ns:.1f} |")
    print(
        f"| compute per document and pass that the target leaves on {cores} cores ({passes_per_iteration:.2f} "
        f"passes per iteration, memory traffic hidden entirely) | **{budget:.1f}** |"
    )
    print(
        f"| sort + MAP oracle + accumulation, in cache ({ns['sort']:.1f} + {ns['oracle']:.1f} + "
        f"{ns['pass']:.1f}) | **{need:.1f}** |"
    )
    print(f"| the same with the scoring | **{need + ns['score']:.1f}** |")
    out.update({"read_ns": read_ns, "budget_ns": budget, "needed_ns": need, "step_ns": ns})
    return out


def print_fit_table(shared: dict, cores: int) -> None:
    """The fit section's table: the fastest fit on every core, against one read of X and the floor."""
    r = dict(shared["best"][cores], **{k: v for k, v in shared.items() if k != "best"})
    gib = r["x_bytes"] / 2**30
    print(
        f"\n## Fit, MSLR-WEB30K fold shape ({r['n_docs']:,} x {r['n_features']} {r['dtype']}, "
        f"{r['n_queries']:,} queries, X = {gib:.2f} GiB), loss map, C=1, eps=1e-3, {cores} threads\n"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| wall time of fit (s) | {r['seconds']:.1f} |")
    print(f"| iterations | {r['n_iter']} (converged: {r['converged']}) |")
    print(f"| first iteration incl. setup (s) | {r['first_iteration_seconds']:.2f} |")
    print(f"| time per iteration (s) | {r['per_iteration']:.3f} |")
    # The first iteration (setup and one pass) is left out of the time per iteration, so
    # its pass is left out of the passes per iteration too.
    passes = (r["n_evals"] - 1) / max(r["n_iter"] - 1, 1)
    print(f"| oracle passes per iteration (after the first) | {passes:.2f} ({r['n_evals']} in all) |")
    print(f"| one read: numpy X @ w (s) | {r['read']:.3f} |")
    print(f"| floor: numpy X @ w + X.T @ c (s) | {r['floor']:.3f} |")
    print(f"| per iteration / one read (X @ w) | **{r['per_iteration'] / r['read']:.2f}** |")
    print(f"| per iteration / floor (X @ w + X.T @ c) | **{r['per_iteration'] / r['floor']:.2f}** |")
    print(f"| per oracle pass / one read | {r['per_iteration'] / passes / r['read']:.2f} |")
    print(f"| peak RSS during fit / size of X | **{r['peak_rss'] / r['x_bytes']:.2f}** |")
    print(f"| (RSS before fit / size of X) | {r['rss_before'] / r['x_bytes']:.2f} |")
    print(f"| memory added by fit / size of X | {(r['peak_rss'] - r['rss_before']) / r['x_bytes']:.3f} |")


def print_threads_table(shared: dict, cores: int) -> None:
    """The threads section's table: the same fit on one thread and on every core (one row
    where the machine has one core)."""
    one, many = shared["best"][1], shared["best"][cores]
    print("\n## Thread scaling of the same fit (best of 2 each, alternating)\n")
    print("| threads | wall time (s) | per iteration (s) | iterations |\n|---:|---:|---:|---:|")
    for t, f in [("1", one)] + ([(str(cores), many)] if cores > 1 else []):
        print(f"| {t} | {f['seconds']:.2f} | {f['per_iteration']:.3f} | {f['n_iter']} |")
    print(
        f"| speed-up 1 -> {cores} | **{one['seconds'] / many['seconds']:.2f}x** | "
        f"{one['per_iteration'] / many['per_iteration']:.2f}x | coef_ bit-identical: {one['coef'] == many['coef']} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=18_900, help="training queries (MSLR-WEB30K fold: about 18,900)")
    parser.add_argument("--docs", type=float, default=120.0, help="mean documents per query")
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--reader-lines", type=int, default=200_000)
    parser.add_argument("--only", default="fit,threads,pass,lightgbm,reader", help="comma-separated sections")
    parser.add_argument("--json", help="also write every measurement to this file")
    tables.add_arguments(parser)
    args = parser.parse_args()
    tables.write_on_exit(args, __file__, None)
    sections = set(args.only.split(","))
    results: dict = {}
    cores = os.cpu_count() or 1

    if sections & {"fit", "threads"}:
        jobs = [cores, 1] if "threads" in sections and cores > 1 else [cores]
        shared = fits(args, jobs, repeats=2 if "threads" in sections else 1)
        results["fit"] = shared
        if "fit" in sections:
            print_fit_table(shared, cores)
        if "threads" in sections:
            print_threads_table(shared, cores)
    if "pass" in sections:
        if "fit" in results:
            best = results["fit"]["best"][cores]
            passes, w = (best["n_evals"] - 1) / max(best["n_iter"] - 1, 1), best["coef"]
        else:
            passes, w = None, None
        results["pass"] = pass_section(args, cores, passes, w)
    if "lightgbm" in sections:
        r = run_child(LIGHTGBM, {})
        results["lightgbm"] = r
        print(f"\n## MQ2008 fold 1 ({r['n_docs']:,} training documents), {cores} threads, best of 5\n")
        print("| ranker | fit (s) | test MAP |\n|---|---:|---:|")
        print(f"| svmmap SVMMap(C=1) | {r['svmmap_seconds']:.3f} | {r['svmmap_map']:.4f} |")
        print(f"| LightGBM LGBMRanker (lambdarank, defaults) | {r['lightgbm_seconds']:.3f} | {r['lightgbm_map']:.4f} |")
        print(f"| LightGBM time / svmmap time | **{r['lightgbm_seconds'] / r['svmmap_seconds']:.1f}x** | |")
    if "reader" in sections:
        results["reader"] = {}
        print(f"\n## Reading a {args.reader_lines:,}-line LETOR file, best of 3\n")
        print("| file | size (MB) | svmmap.load_letor (s) | sklearn load_svmlight_file (s) | sklearn / svmmap |")
        print("|---|---:|---:|---:|---:|")
        with tempfile.TemporaryDirectory() as tmp:
            for name, write in (
                ("MSLR shape, 136 features", write_mslr_shape),
                ("MQ2008 lines, 46 features + comments", write_mq2008_repeated),
            ):
                path = os.path.join(tmp, "data.txt")
                write(path, args.reader_lines)
                r = run_child(READER, {"SCALE_FILE": path})
                if r["svmmap_shape"] != r["sklearn_shape"] or not all(
                    abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(r["svmmap_checksum"], r["sklearn_checksum"])
                ):
                    sys.exit(f"the readers disagree on {name}: {r}")
                results["reader"][name] = r
                print(
                    f"| {name} | {r['bytes'] / 1e6:.0f} | {r['svmmap']:.3f} | {r['sklearn']:.3f} | **{r['sklearn'] / r['svmmap']:.1f}x** |"
                )
                os.remove(path)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
