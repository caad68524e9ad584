"""The race's rules (svmmap._search.engine's SLOW_FACTOR, SLOW_AFTER, RACE_ONE_SPLIT and
RACE_LAST_SPLIT): the call ``SVMMapCV(loss="auto", preprocessing="auto", scoring="ndcg@10",
n_jobs=1)`` of benchmarks/auto_search.py fitted on the train split, with its own 5 query
folds (``--cv 5``) or with ``cv="validation"`` and the vali split as ``eval_set`` (``--cv
validation``), under each setting, one after the other on each data set and in the same
process, so that the settings are timed under the same load.

Settings: "default" (the engine's), "off" (no cost rule), "F:A" (the cost rule with factor F
from split A on), "one-off" (no race before the next C in a search of one split), "last-on"
(the race before the next C in a k-fold search too).

Prints one line per data set and setting: the CPU seconds of the search and refit
(``time.process_time``; the search is single-threaded, so these are its own seconds on a core,
which the machine's other load inflates far less than the wall clock) and their ratio to the
first setting's on the same data, the wall seconds, the test NDCG@10 of the chosen model
(svmmap.metrics) and its difference to the first setting's, the rows fitted and the choice,
and the one-minute load average when it ended. Then per kind, for each setting against the
first: the summed CPU ratio and a Wilcoxon signed-rank test (scipy.stats.wilcoxon,
two-sided, zero differences dropped) over the per-query test NDCG@10 of all its data sets.
With --repeat N the settings are run N times, alternating (the test counts each query
once). It prints its tables only: none is published into docs/.

    python benchmarks/race_cost.py [--kinds raw,many,mq2008] [--folds 1,2,3,4,5] [--seeds 0]
        [--settings off,default] [--cv 5|validation]
"""

from __future__ import annotations

import argparse
import os
import warnings
from dataclasses import replace
from typing import Any, Dict, List, Tuple

import auto_search  # benchmarks/auto_search.py, beside this script
import numpy as np
import svmmap.model_selection as model_selection
from svmmap._search import engine
from svmmap.metrics import per_query


def setting(text: str) -> Dict[str, Any]:
    """The Policy fields that a --settings item changes."""
    if text == "default":
        return {}
    if text == "off":
        return {"slow_factor": None}
    if text == "one-off":
        return {"race_one_split": False}
    if text == "last-on":
        return {"race_last_split": True}
    factor, after = text.split(":")
    return {"slow_factor": float(factor), "slow_after": int(after)}


def with_policy(fields: Dict[str, Any]) -> None:
    """SVMMapCV's searches run with the Policy fields ``fields`` changed."""

    def run(candidates: Any, data: Any, policy: Any) -> Any:
        return engine.run(candidates, data, replace(policy, **fields))

    model_selection.run = run  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="raw,many,mq2008", help="data sets (default raw,many,mq2008)")
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default all five)")
    parser.add_argument("--seeds", default="0", help="seeds of the generated kinds (default 0)")
    parser.add_argument("--settings", default="off,default", help="see above (default off,default)")
    parser.add_argument("--cv", default="5", choices=("5", "validation"), help="the search's splits (default 5)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the settings, alternating (default 1)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folds = [int(f) for f in args.folds.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    names = args.settings.split(",")
    validation = args.cv == "validation"
    print(f"cv={args.cv!r}")
    print("| data | fold | setting | CPU s | CPU / first | wall s | test NDCG@10 | - first | choice | load |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---:|")
    cpu_of: Dict[Tuple[str, str], List[float]] = {}
    values_of: Dict[Tuple[str, str], List[np.ndarray]] = {}
    for kind, fold, (train, vali, test) in auto_search.data_sets(args.kinds.split(","), folds, seeds):
        for repeat in range(args.repeat):
            first: Tuple[float, float] = (0.0, 0.0)
            for name in names:
                with_policy(setting(name))
                search, chosen, seconds, cpu = auto_search.svmmap_search(train, vali, None, validation=validation)
                values = per_query("ndcg@10", test[1], search.predict(test[0]), test[2]).values
                score = float(values.mean())
                if name == names[0]:
                    first = (cpu, score)
                cpu_of.setdefault((kind, name), []).append(cpu)
                if repeat == 0:
                    # A repeat fits the same models: its queries would count twice in the test.
                    values_of.setdefault((kind, name), []).append(values)
                load = os.getloadavg()[0]
                print(
                    f"| {kind} | {fold} | {name} | {cpu:.2f} | {cpu / first[0]:.2f} | {seconds:.2f} | {score:.4f} "
                    f"| {score - first[1]:+.4f} | {chosen} | {load:.1f} |",
                    flush=True,
                )
    summary(args.kinds.split(","), names, cpu_of, values_of)


def summary(
    kinds: List[str],
    names: List[str],
    cpu_of: Dict[Tuple[str, str], List[float]],
    values_of: Dict[Tuple[str, str], List[np.ndarray]],
) -> None:
    from scipy.stats import wilcoxon

    print()
    print("| data, all its sets | setting - first | CPU ratio | queries | mean NDCG@10 difference | Wilcoxon p |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in kinds:
        a0 = np.concatenate(values_of[(kind, names[0])])
        for name in names[1:]:
            a = np.concatenate(values_of[(kind, name)])
            ratio = sum(cpu_of[(kind, name)]) / sum(cpu_of[(kind, names[0])])
            differ = np.any(a != a0)
            p = f"{wilcoxon(a, a0).pvalue:.3g}" if differ else "same rankings"
            print(f"| {kind} | {name} - {names[0]} | {ratio:.2f} | {len(a)} | {np.mean(a - a0):+.4f} | {p} |")


if __name__ == "__main__":
    main()
