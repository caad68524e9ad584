"""The race's cost rule (svmmap._search.engine.SLOW_FACTOR and SLOW_AFTER): the default call of
benchmarks/auto_search.py, ``SVMMapCV(loss="auto", preprocessing="auto", scoring="ndcg@10",
n_jobs=1)`` fitted on the train split, without the rule ("off") and with it ("default", or
"F:A", a factor F from split A on), one after the other on each data set and in the same
process, so that the settings are timed under the same load.

Prints one line per data set and setting: the CPU seconds of the search and refit
(``time.process_time``; the search is single-threaded, so these are its own seconds on a core,
which the machine's other load inflates far less than the wall clock), the wall seconds, the
test NDCG@10 of the chosen model (svmmap.metrics), the rows fitted and the choice, and the
one-minute load average when it ended. With --repeat N the settings are run N times, alternating.

    python benchmarks/race_cost.py [--kinds raw,many,mq2008] [--folds 1,2,3,4,5] [--seeds 0]
        [--settings off,default,5:2]
"""

from __future__ import annotations

import argparse
import os
import warnings
from dataclasses import replace
from typing import Any, Optional, Tuple

import auto_search  # benchmarks/auto_search.py, beside this script
import svmmap.model_selection as model_selection
from svmmap._search import engine
from svmmap.metrics import ndcg


def setting(text: str) -> Tuple[Optional[float], int]:
    """(slow_factor, slow_after) of a --settings item: "off", "default" or "F:A"."""
    if text == "off":
        return None, engine.SLOW_AFTER
    if text == "default":
        return engine.SLOW_FACTOR, engine.SLOW_AFTER
    factor, after = text.split(":")
    return float(factor), int(after)


def with_rule(factor: Optional[float], after: int) -> None:
    """SVMMapCV's searches run with the cost rule's factor ``factor`` (None: no rule) from
    split ``after`` on."""

    def run(candidates: Any, data: Any, policy: Any) -> Any:
        return engine.run(candidates, data, replace(policy, slow_factor=factor, slow_after=after))

    model_selection.run = run  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="raw,many,mq2008", help="data sets (default raw,many,mq2008)")
    parser.add_argument("--folds", default="1,2,3,4,5", help="MQ2008 folds (default all five)")
    parser.add_argument("--seeds", default="0", help="seeds of the generated kinds (default 0)")
    parser.add_argument("--settings", default="off,default", help="off, default or F:A (default off,default)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the settings, alternating (default 1)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folds = [int(f) for f in args.folds.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    print("| data | fold | cost rule | CPU s | wall s | test NDCG@10 | choice | load |")
    print("|---|---|---|---:|---:|---:|---|---:|")
    for kind, fold, (train, vali, test) in auto_search.data_sets(args.kinds.split(","), folds, seeds):
        for _ in range(args.repeat):
            for name in args.settings.split(","):
                factor, after = setting(name)
                with_rule(factor, after)
                search, chosen, seconds, cpu = auto_search.svmmap_search(train, vali, None, validation=False)
                score = ndcg(test[1], search.predict(test[0]), test[2], k=10)
                load = os.getloadavg()[0]
                print(
                    f"| {kind} | {fold} | {name} | {cpu:.2f} | {seconds:.2f} | {score:.4f} | {chosen} | {load:.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
