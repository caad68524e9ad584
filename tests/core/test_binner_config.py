"""The one binner configuration (`_core.BinnerConfig`): its defaults are every binner's, its
checks are the only ones, and a bad value gets one message wherever it is given (``Binner``,
``svmmap.dask.Binner``, a model file's binning)."""

import inspect
import json
import pickle
from typing import get_args

import numpy as np
import pytest
import svmmap
from sklearn.pipeline import make_pipeline
from svmmap import Binner, ModelFormatError, SVMMap, _core, load_model, save_model
from svmmap._files.model_file import read_model
from svmmap._typing import BinStrategy, Missing
from svmmap.ir.fusion import RunFusion

X = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 7.0], [2.0, 6.0]])

#: Bad values of every parameter and the message each gets (the words users saw before the
#: checks moved to the core).
BAD = [
    ({"n_thresholds": 0}, "n_thresholds must be an integer >= 1, got 0"),
    ({"n_thresholds": -3}, "n_thresholds must be an integer >= 1, got -3"),
    ({"n_thresholds": 2.5}, "n_thresholds must be an integer >= 1, got 2.5"),
    ({"n_thresholds": "5"}, "n_thresholds must be an integer >= 1, got '5'"),
    ({"n_thresholds": True}, "n_thresholds must be an integer >= 1, got True"),
    ({"n_thresholds": None}, "n_thresholds must be an integer >= 1, got None"),
    ({"n_thresholds": -(10**30)}, f"n_thresholds must be an integer >= 1, got {-(10**30)}"),
    ({"n_thresholds": 2**32}, "n_thresholds must be an integer >= 1 and at most 4294967295, got 4294967296"),
    ({"n_thresholds": 10**30}, f"n_thresholds must be an integer >= 1 and at most 4294967295, got {10**30}"),
    ({"strategy": "kmeans"}, "strategy must be one of ('quantile', 'uniform'), got 'kmeans'"),
    ({"strategy": None}, "strategy must be one of ('quantile', 'uniform'), got None"),
    ({"missing": "nan"}, "missing must be one of ('error', 'indicator'), got 'nan'"),
    ({"missing": 1}, "missing must be one of ('error', 'indicator'), got 1"),
    ({"output": "dense"}, "output must be one of ('codes', 'indicators'), got 'dense'"),
]


def test_every_binner_shows_the_cores_defaults():
    defaults = _core.BinnerConfig.DEFAULTS
    assert defaults == {"n_thresholds": 50, "strategy": "quantile", "missing": "error", "output": "codes"}
    for binner in (Binner, pytest.importorskip("svmmap.dask").Binner):
        params = inspect.signature(binner).parameters
        assert {k: params[k].default for k in defaults} == defaults, binner
    fusion = inspect.signature(RunFusion).parameters
    assert {k: fusion[k].default for k in ("n_thresholds", "strategy")} == {
        k: defaults[k] for k in ("n_thresholds", "strategy")
    }
    # The signature of the configuration lists exactly the keys of DEFAULTS, keyword-only.
    params = inspect.signature(_core.BinnerConfig).parameters
    assert list(params) == list(defaults)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_the_typed_choices_are_the_cores():
    # The Literal types restate the names for type checkers; the core must accept exactly them.
    for key, names in (("strategy", get_args(BinStrategy)), ("missing", get_args(Missing))):
        assert [getattr(_core.BinnerConfig(**{key: n}), key) for n in names] == list(names)
        with pytest.raises(ValueError, match=f"one of {names!r}".replace("(", r"\(").replace(")", r"\)")):
            _core.BinnerConfig(**{key: "x"})


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[f"{k}={v!r}" for kw, _ in BAD for k, v in kw.items()])
def test_a_bad_value_has_one_message_everywhere(kwargs, message):
    with pytest.raises(ValueError) as config:
        _core.BinnerConfig(**kwargs)
    assert str(config.value) == message
    with pytest.raises(ValueError) as local:
        Binner(**kwargs).fit(X)
    assert str(local.value) == message


def test_a_bad_value_has_the_same_message_from_the_dask_binner(tmp_path):
    da = pytest.importorskip("dask.array")
    import svmmap.dask

    # The parameters are checked before a cluster is asked for, so none is needed here.
    for kwargs, message in BAD:
        with pytest.raises(ValueError) as dist:
            svmmap.dask.Binner(**kwargs).fit(da.from_array(X, chunks=(2, 2)))
        assert str(dist.value) == message
        with pytest.raises(ValueError) as local:
            svmmap.dask.Binner(**kwargs).fit(X)
        assert str(local.value) == message


def test_a_bad_value_in_a_model_file_has_the_same_words(tmp_path):
    model = make_pipeline(Binner(n_thresholds=3), SVMMap(C=10.0)).fit(X, [1, 0, 1, 0], svmmap__qid=[1, 1, 2, 2])
    path = tmp_path / "m.json"
    save_model(model, path)
    good = json.loads(path.read_text())
    for kwargs, message in BAD:
        ((key, value),) = kwargs.items()
        if isinstance(value, int) and abs(value) > 2**63:
            continue  # beyond what the file reader keeps as an integer
        doc = json.loads(json.dumps(good))
        doc["binning"]["params"][key] = value
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(doc))
        # The core's words, the field named as the file names it: '"params"."strategy" must be ...'.
        expected = f'invalid binning: "params"."{key}"{message[len(key) :]}'
        for read in (read_model, load_model):
            with pytest.raises(ModelFormatError) as refused:
                read(bad)
            # json.dumps wrote the document on one line, where the field is.
            assert str(refused.value) == f"{bad}:1: {expected}", read


def test_a_config_is_frozen_and_pickles_as_its_keyword_arguments():
    config = _core.BinnerConfig(n_thresholds=np.int64(7), strategy="uniform", missing="indicator")
    assert config.kwargs() == {"n_thresholds": 7, "strategy": "uniform", "missing": "indicator", "output": "codes"}
    assert type(config.kwargs()["n_thresholds"]) is int
    again = pickle.loads(pickle.dumps(config))
    assert again == config and again.kwargs() == config.kwargs()
    assert _core.BinnerConfig(**config.kwargs()) == config
    assert repr(config).startswith("BinnerConfig(**{")
    with pytest.raises(AttributeError):
        config.strategy = "quantile"  # type: ignore[misc]
    with pytest.raises(TypeError):
        _core.BinnerConfig(7)  # type: ignore[misc]
    with pytest.raises(TypeError):
        _core.BinnerConfig(bins=7)  # type: ignore[call-arg]


def test_the_binning_calls_take_the_configuration_not_names():
    config = _core.BinnerConfig(n_thresholds=2, missing="indicator")
    values, offsets = _core.bin_fit(X, config, 1)
    assert offsets.tolist() == [0, 2, 4]
    codes = _core.bin_codes(X, values, offsets, config, 1)
    indptr, indices, n_cols = _core.bin_transform(X, values, offsets, config, 1)
    assert codes.shape == X.shape and n_cols == 6 and indptr[-1] == len(indices)
    with pytest.raises(TypeError):
        _core.bin_fit(X, 2, "quantile", "error", 1)  # type: ignore[call-arg]
    assert svmmap.Binner(n_thresholds=2, missing="indicator").fit(X).n_output_features_ == n_cols
