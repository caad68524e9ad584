"""The one thread-count rule (issue 38): n_jobs=None and n_jobs=-1 are the same threads,
one per core, whatever RAYON_NUM_THREADS says; the cap of 1024 and the wording of a refused
n_jobs are the same for every caller."""

import os
import subprocess
import sys

import pytest
from svmmap import Binner, SVMMap, _core
from svmmap.datasets import make_ranking

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")

COUNT_THREADS = """
import os
import numpy as np
from svmmap import SVMMap
from svmmap.datasets import make_ranking

X, y, qid = make_ranking(20, 10, 4, random_state=0)

def threads():
    return len(os.listdir("/proc/self/task"))

before = threads()
SVMMap(n_jobs=None).fit(X, y, qid=qid)
after_none = threads()
SVMMap(n_jobs=-1).fit(X, y, qid=qid)
after_minus_one = threads()
print(before, after_none, after_minus_one, os.cpu_count(), len(os.sched_getaffinity(0)))
"""


@pytest.mark.parametrize("rayon", [None, "7", "1"])
@pytest.mark.slow
def test_none_and_minus_one_start_the_same_threads_whatever_rayon_num_threads_says(rayon):
    env = {k: v for k, v in os.environ.items() if k != "RAYON_NUM_THREADS"}
    if rayon is not None:
        env["RAYON_NUM_THREADS"] = rayon
    out = subprocess.run([sys.executable, "-c", COUNT_THREADS], env=env, capture_output=True, text=True, check=True)
    before, after_none, after_minus_one, _, usable = map(int, out.stdout.split())
    # One pool of one thread per usable core, started by the first fit and lent to the second.
    assert after_none - before == usable, out.stdout
    assert after_minus_one == after_none, out.stdout


@pytest.mark.parametrize("n_jobs", [0, 1025, 5000, 10**12, True, 2.5, "2"])
def test_a_refused_n_jobs_has_the_same_words_everywhere(n_jobs):
    X, y, qid = make_ranking(10, 6, 3, random_state=1)
    expected = (
        "n_jobs must be None, an integer from 1 to 1024, or a negative integer (-1: every core, -2: all but one), got "
    )
    calls = {
        "_core.n_threads": lambda: _core.n_threads(n_jobs),
        "SVMMap.fit": lambda: SVMMap(n_jobs=n_jobs).fit(X, y, qid=qid),
        "Binner.fit": lambda: Binner(n_jobs=n_jobs).fit(X),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value).startswith(expected), (name, str(info.value))
