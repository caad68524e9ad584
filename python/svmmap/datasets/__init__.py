"""Bundled data: MQ2008 from LETOR 4.0 (five folds rebuilt from its five query subsets), and a
generator of synthetic query-grouped data shaped like MSLR-WEB30K (``make_ranking``)."""

from __future__ import annotations

import functools
import gzip
import os
import shutil
from importlib import resources
from typing import Any, Iterable, Iterator, List, NamedTuple, Optional

import numpy as np

from .._validation import invalid_parameter, refuse_str
from ..io import letor_docids, load_letor
from ._synthetic import MSLR_LABEL_FRACTIONS, RankingData, make_ranking

__all__ = [
    "MQ2008_FOLDS",
    "MSLR_LABEL_FRACTIONS",
    "RankingData",
    "Split",
    "Fold",
    "make_ranking",
    "mq2008_path",
    "load_mq2008",
    "mq2008_folds",
    "write_mq2008",
    "letor_folds",
    "LETOR4_FEATURE_NAMES",
    "LETOR4_RETRIEVAL_FUNCTIONS",
    "load_mq2008_docs",
]

#: Which subsets form each fold, as in MQ2008's readme.txt: fold k trains on S_k, S_k+1, S_k+2,
#: validates on S_k+3 and tests on S_k+4 (indices modulo 5).
MQ2008_FOLDS = {
    k: {
        "train": [(k - 1 + i) % 5 + 1 for i in range(3)],
        "vali": [(k + 2) % 5 + 1],
        "test": [(k + 3) % 5 + 1],
    }
    for k in range(1, 6)
}


class Split(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    qid: np.ndarray


class Fold(NamedTuple):
    name: str
    train: Split
    vali: Split
    test: Split


def mq2008_path(subset: int) -> str:
    """Path of the bundled, gzip-compressed MQ2008 subset S1 ... S5."""
    if subset not in range(1, 6):
        raise ValueError(f"MQ2008 has subsets 1..5, got {subset!r}")
    return str(resources.files(__package__).joinpath("data", "MQ2008", f"S{subset}.txt.gz"))


@functools.lru_cache(maxsize=None)
def _subset(subset: int, dtype: str) -> Split:
    X, y, qid = load_letor(mq2008_path(subset), dtype=dtype)
    for a in (X, y, qid):
        a.setflags(write=False)
    return Split(X, y, qid)


def _concat(parts: list) -> Split:
    if len(parts) == 1:
        return parts[0]
    return Split(*(np.concatenate([getattr(p, f) for p in parts]) for f in Split._fields))


def _check_fold(fold: Any) -> None:
    """An MQ2008 fold number, 1 to 5: an int (True is not fold 1, as "1" is not)."""
    if isinstance(fold, bool) or not isinstance(fold, (int, np.integer)) or fold not in MQ2008_FOLDS:
        raise ValueError(f"MQ2008 has folds 1..5, got {fold!r}")


def load_mq2008(fold: int = 1, split: str = "train", *, dtype: Any = np.float64) -> Split:
    """One split of one MQ2008 fold: ``(X, y, qid)`` with 46 features and labels 0, 1, 2.

    Examples
    --------
    >>> from svmmap.datasets import load_mq2008
    >>> X, y, qid = load_mq2008(fold=1, split="test")
    >>> X.shape, len(set(qid))
    ((2874, 46), 156)
    """
    _check_fold(fold)
    if split not in ("train", "vali", "test"):
        raise invalid_parameter("split", '"train", "vali" or "test"', split)
    name = np.dtype(dtype).name
    return _concat([_subset(s, name) for s in MQ2008_FOLDS[fold][split]])


def mq2008_folds(*, dtype: Any = np.float64) -> Iterator[Fold]:
    """The five MQ2008 folds in order."""
    for k in MQ2008_FOLDS:
        yield Fold(f"Fold{k}", *(load_mq2008(k, s, dtype=dtype) for s in ("train", "vali", "test")))


def write_mq2008(directory: Any, *, folds: Optional[Iterable[int]] = None) -> List[str]:
    """Write the bundled MQ2008 as LETOR 4.0 lays it out: ``directory/Fold{k}/{train,vali,test}.txt``.

    The files are byte for byte the release's fold files (comments with the document ids
    included), so every tool that reads LETOR files reads them, and ``svmmap experiment --data
    directory`` reproduces the bundled folds' table; their rows are those of ``load_mq2008`` in
    the same order. Existing files of these names are replaced.

    Parameters
    ----------
    directory : str or path-like
        Where the ``Fold*`` directories go; created if missing.
    folds : iterable of int, optional
        The folds to write (1 to 5); all five by default.

    Returns
    -------
    list of str
        The paths written, fold by fold, train, vali and test.

    Examples
    --------
    >>> import os, tempfile
    >>> from svmmap.datasets import write_mq2008
    >>> with tempfile.TemporaryDirectory() as root:
    ...     paths = write_mq2008(root, folds=[1])
    ...     [os.path.relpath(p, root) for p in paths]
    ['Fold1/train.txt', 'Fold1/vali.txt', 'Fold1/test.txt']
    """
    if folds is not None:
        refuse_str(folds, "folds", "a list of MQ2008 fold numbers (1 to 5)")
    chosen = list(MQ2008_FOLDS) if folds is None else list(folds)
    for k in chosen:
        _check_fold(k)
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"folds lists a fold twice: {chosen!r}; each fold is written once")
    written = []
    for k in chosen:
        fold_dir = os.path.join(os.fspath(directory), f"Fold{k}")
        os.makedirs(fold_dir, exist_ok=True)
        for split in ("train", "vali", "test"):
            path = os.path.join(fold_dir, f"{split}.txt")
            # The subsets are decompressed as bytes, unparsed, so that the files keep every
            # character of the release (comments, spacing, the order of the lines).
            with open(path, "wb") as out:
                for subset in MQ2008_FOLDS[k][split]:
                    with gzip.open(mq2008_path(subset), "rb") as source:
                        shutil.copyfileobj(source, out)
            written.append(path)
    return written


def letor_folds(root: str, *, dtype: Any = np.float64, folds: Optional[list] = None) -> Iterator[Fold]:
    """Folds of a LETOR-style directory: ``root/Fold*/{train,vali,test}.txt`` (or ``.txt.gz``)."""
    names = sorted(
        (d for d in os.listdir(root) if d.lower().startswith("fold") and os.path.isdir(os.path.join(root, d))),
        key=lambda d: (len(d), d),
    )
    if folds is not None:
        names = [n for n in names if n[4:] in {str(f) for f in folds}]
    if not names:
        raise FileNotFoundError(f"{root}: no Fold* directories (expected root/Fold1/train.txt ...)")
    for name in names:
        parts = []
        for split in ("train", "vali", "test"):
            base = os.path.join(root, name, split + ".txt")
            path = base if os.path.exists(base) else base + ".gz"
            if not os.path.exists(path):
                raise FileNotFoundError(f"{base}: missing")
            parts.append(Split(*load_letor(path, dtype=dtype)))
        # Test and validation files may lack the highest feature indices of the training file.
        d = parts[0].X.shape[1]
        for i in (1, 2):
            if parts[i].X.shape[1] != d:
                split = ("train", "vali", "test")[i]
                path = os.path.join(root, name, split + ".txt")
                path = path if os.path.exists(path) else path + ".gz"
                parts[i] = Split(*load_letor(path, dtype=dtype, n_features=max(d, parts[i].X.shape[1])))
        yield Fold(name, *parts)


#: The 46 features of LETOR 4.0's MQ2007 and MQ2008, in column order (feature k is column k-1).
#: Source: T. Qin and T.-Y. Liu, "Introducing LETOR 4.0 Datasets", arXiv:1306.2597, the feature
#: table (the dataset's readme does not list them). Streams: body, anchor, title, URL, whole
#: document.
LETOR4_FEATURE_NAMES = tuple(
    [
        f"{m}.{s}"
        for m in ("TF", "IDF", "TF-IDF", "DL", "BM25", "LMIR.ABS", "LMIR.DIR", "LMIR.JM")
        for s in ("body", "anchor", "title", "URL", "whole")
    ]
    + ["PageRank", "Inlinks", "Outlinks", "URL.slashes", "URL.length", "ChildPages"]
)

#: The query-dependent retrieval functions among them (column index by name): TF-IDF, BM25 and
#: the three language models (absolute discounting, Dirichlet, Jelinek-Mercer smoothing), each
#: on the five streams. These are base functions in the sense of Yue et al. (their Indri
#: functions: TFIDF, Okapi, LM with Dirichlet and with Jelinek-Mercer smoothing, cosine).
LETOR4_RETRIEVAL_FUNCTIONS = {
    name: i for i, name in enumerate(LETOR4_FEATURE_NAMES) if name.split(".")[0] in ("TF-IDF", "BM25", "LMIR")
}


def load_mq2008_docs(subsets: Any = (1, 2, 3, 4, 5), *, dtype: Any = np.float64) -> tuple:
    """All documents of the given MQ2008 subsets with their document ids.

    Returns
    -------
    X : ndarray of shape (n_documents, 46)
    y : ndarray of labels 0, 1, 2
    qid : ndarray of int64 query ids
    docno : ndarray of str, the GOV2 document ids of the ``#docid = ...`` comments
    """
    parts = []
    for s in subsets:
        X, y, qid, comments = load_letor(mq2008_path(int(s)), dtype=dtype, return_comments=True)
        parts.append((X, y, qid, letor_docids(comments, path=mq2008_path(int(s)))))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))
