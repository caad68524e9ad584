"""A fitted scikit-learn scaler as plain data (ScalerSpec): its dict as model files hold it (read
and checked, written), and the scaler folded into what comes after it: into linear weights
(folded_linear), and into thresholds over the raw features, exactly (raw_thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .fitted import check_names, count, is_number, json_value, kind_of, show

__all__ = [
    "SCALER_TYPES",
    "ScalerSpec",
    "folded_linear",
    "raw_threshold",
    "raw_thresholds",
    "scaler_from_dict",
    "scaler_spec",
    "scaler_to_dict",
]

#: The scalers a model file holds: their "type" (the class's import path), and the fitted
#: attributes written for each. The first names are those the affine map reads; the others
#: (statistics of the fit) are written so that the loaded scaler is the fitted one again.
SCALER_TYPES: Dict[str, Tuple[str, ...]] = {
    "sklearn.preprocessing.StandardScaler": ("mean_", "scale_", "var_", "n_samples_seen_"),
    "sklearn.preprocessing.MinMaxScaler": (
        "min_",
        "scale_",
        "data_min_",
        "data_max_",
        "data_range_",
        "n_samples_seen_",
    ),
    "sklearn.preprocessing.MaxAbsScaler": ("scale_", "max_abs_", "n_samples_seen_"),
}


@dataclass
class ScalerSpec:
    """A fitted scikit-learn scaler as a model file holds it: an affine map of every input
    feature, x' = (x - shift) / divisor, or x' = x * factor + offset for MinMaxScaler (the
    operations, in their order, that the scaler's ``transform`` applies, so that ``transform``
    below gives its float64 results bit for bit)."""

    type: str
    params: Dict[str, Any]
    n_features_in: int
    attributes: Dict[str, Any]
    feature_names_in: Optional[List[str]] = None

    @property
    def name(self) -> str:
        """The class name ("StandardScaler")."""
        return self.type.rsplit(".", 1)[1]

    def operations(self) -> List[Tuple[str, np.ndarray]]:
        """The map as the element-wise operations ("sub", "div", "mul" or "add", with one number
        per feature) applied to x in this order."""
        return [(op, self.attributes[name]) for op, name in _used_attributes(self)]

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The scaled features of a float64 ``X`` (NaN stays NaN, as in scikit-learn)."""
        out = np.array(X, dtype=np.float64, copy=True)
        for op, v in self.operations():
            if op == "sub":
                out -= v
            elif op == "div":
                out /= v
            elif op == "mul":
                out *= v
            else:
                out += v
        return out

    def slope_intercept(self) -> Tuple[np.ndarray, np.ndarray]:
        """(a, b) with x' = a * x + b as real numbers (rounded to float64): the map folded
        into one multiplication and one addition, as exports to weights need it."""
        a = np.ones(self.n_features_in)
        b = np.zeros(self.n_features_in)
        for op, v in self.operations():
            if op == "sub":
                b = b - v
            elif op == "div":
                a, b = a / v, b / v
            elif op == "mul":
                a, b = a * v, b * v
            else:
                b = b + v
        return a, b


def _number_list(v: Any, n: int, field: str) -> np.ndarray:
    if not isinstance(v, list) or len(v) != n or not all(is_number(t) for t in v):
        raise ValueError(f'"{field}" must be a list of {n} finite numbers, got {show(v)}')
    return np.asarray(v, dtype=np.float64).reshape(-1)


def scaler_from_dict(d: Any) -> ScalerSpec:
    """The scaler of a model file's "scaler" field, checked.

    Raises
    ------
    ValueError
        When the type is not one of ``SCALER_TYPES``, a parameter makes the map not affine
        (``clip=True``), or an attribute is missing, not finite, of the wrong length, a
        scale is not positive, or the statistics contradict each other (``_check_statistics``).
    """
    if not isinstance(d, dict):
        raise ValueError(f"must be an object, got {kind_of(d)}")
    kind = d.get("type")
    if kind not in SCALER_TYPES:
        raise ValueError(f'"type" must be one of {sorted(SCALER_TYPES)}, got {show(kind)}')
    params = d.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f'"params" must be an object, got {kind_of(params)}')
    for key in ("with_mean", "with_std", "clip", "copy"):
        if key in params and not isinstance(params[key], bool):
            raise ValueError(f'"params"."{key}" must be true or false, got {show(params[key])}')
    if params.get("clip", False):
        raise ValueError('"params"."clip" is true: a clipped MinMaxScaler is not an affine map')
    if "feature_range" in params:
        r = params["feature_range"]
        if not (isinstance(r, list) and len(r) == 2 and all(is_number(t) for t in r) and r[0] < r[1]):
            raise ValueError(f'"params"."feature_range" must be two increasing numbers, got {show(r)}')
    n = count(d.get("n_features_in"), "n_features_in")
    names = d.get("feature_names_in")
    if names is not None:
        check_names(names, "feature_names_in")
        if len(names) != n:
            raise ValueError(f"{len(names)} feature names for {n} features")
    raw = d.get("attributes")
    if not isinstance(raw, dict):
        raise ValueError(f'"attributes" must be an object, got {kind_of(raw)}')
    spec = ScalerSpec(kind, dict(params), n, {}, None if names is None else list(names))
    used = {name for op, name in _used_attributes(spec)}
    for key in SCALER_TYPES[kind]:
        value = raw.get(key)
        if key == "n_samples_seen_":
            # A count, or one count per feature when the data had NaN (scikit-learn's layout).
            # It is a weight sum with sample weights, so not always an integer, but never below 0.
            ok = (isinstance(value, (int, float)) and is_number(value) and value >= 0) or (
                isinstance(value, list) and len(value) == n and all(is_number(t) and t >= 0 for t in value)
            )
            if not ok:
                raise ValueError(
                    f'"attributes"."n_samples_seen_" must be a number >= 0 or a list of {n} such numbers, '
                    f"got {show(value)}"
                )
            spec.attributes[key] = np.asarray(value) if isinstance(value, list) else value
        elif value is None and key not in used:
            # StandardScaler(with_std=False) has no scale_ and var_; with neither, no mean_.
            spec.attributes[key] = None
        else:
            spec.attributes[key] = _number_list(value, n, f'attributes"."{key}')
    scale = spec.attributes.get("scale_")
    if scale is not None and not np.all(scale > 0):
        j = int(np.flatnonzero(~(scale > 0))[0])
        # A scale <= 0 would flip (or erase) the order of a feature's values; scikit-learn's
        # scalers never fit one (a constant feature gets the scale 1).
        raise ValueError(f'"attributes"."scale_"[{j}] is {float(scale[j])!r}; a scale must be positive')
    _check_statistics(spec)
    return spec


#: scikit-learn's ``_handle_zeros_in_scale``: a spread below this (ten machine epsilons of
#: float64, np.spacing(1.0)) is a constant feature's, whose scale is 1.
_CONSTANT_SPREAD = 10 * np.spacing(1.0)


def _first(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


def _check_statistics(spec: ScalerSpec) -> None:
    """The scale as scikit-learn's ``fit`` computes it from the statistics the file also holds
    (StandardScaler: the square root of ``var_``, or 1 for a constant feature; MaxAbsScaler:
    ``max_abs_``, or 1 below ten machine epsilons; MinMaxScaler: the range's width over ``data_range_ =
    data_max_ - data_min_``, with ``min_`` from ``data_min_``), the same float64 operations, so
    a fitted scaler's file agrees bit for bit. A file that contradicts them (a scale of 1e308
    beside a variance of 1) was edited or damaged; it used to load and then make the scores
    overflow, which predict blamed on the user's X."""
    a = spec.attributes
    # A statistic left out (null) is not checked: the map reads only the scale and shift.
    given = {name for name, value in a.items() if value is not None}
    with np.errstate(all="ignore"):
        if spec.name == "StandardScaler":
            _not_negative(a.get("var_"), "var_", "a variance")
            if a.get("scale_") is not None and a.get("var_") is not None:
                expected = np.sqrt(a["var_"])
                _agree(a["scale_"], expected, "scale_", "the square root of its var_", one=True)
        elif spec.name == "MaxAbsScaler" and "max_abs_" in given:
            _not_negative(a["max_abs_"], "max_abs_", "a largest magnitude")
            expected = np.where(a["max_abs_"] < _CONSTANT_SPREAD, 1.0, a["max_abs_"])
            _agree(a["scale_"], expected, "scale_", "its max_abs_ (1 below ten machine epsilons)")
        elif spec.name == "MinMaxScaler" and {"data_min_", "data_max_", "data_range_"} <= given:
            _agree(a["data_range_"], a["data_max_"] - a["data_min_"], "data_range_", "data_max_ - data_min_")
            low, high = (float(t) for t in spec.params.get("feature_range", (0.0, 1.0)))
            spread = a["data_range_"]
            scale = (high - low) / np.where(spread < _CONSTANT_SPREAD, 1.0, spread)
            said = "the feature_range's width over data_range_ (1 below ten machine epsilons)"
            _agree(a["scale_"], scale, "scale_", said)
            _agree(a["min_"], low - a["data_min_"] * a["scale_"], "min_", "feature_range[0] - data_min_ * scale_")


def _not_negative(values: Optional[np.ndarray], name: str, what: str) -> None:
    if values is not None and not np.all(values >= 0):
        j = _first(~(values >= 0))
        raise ValueError(f'"attributes"."{name}"[{j}] is {float(values[j])!r}, but {what} is never negative')


def _agree(values: np.ndarray, expected: np.ndarray, name: str, rule: str, one: bool = False) -> None:
    """Refuses the first entry of `values` that is not `expected` (nor 1, with `one`)."""
    ok = (values == expected) | (values == 1.0) if one else values == expected
    if not np.all(ok):
        j = _first(~ok)
        alternative = " (or 1, for a constant feature)" if one else ""
        raise ValueError(
            f'"attributes"."{name}"[{j}] is {float(values[j])!r}, but scikit-learn fits it as {rule}{alternative}, '
            f"{float(expected[j])!r}: the scaler's statistics contradict each other (was the file edited?)"
        )


def _used_attributes(spec: ScalerSpec) -> List[Tuple[str, str]]:
    """(operation, attribute) of the map, from the type and parameters alone."""
    if spec.name == "StandardScaler":
        out = []
        if spec.params.get("with_mean", True):
            out.append(("sub", "mean_"))
        if spec.params.get("with_std", True):
            out.append(("div", "scale_"))
        return out
    if spec.name == "MinMaxScaler":
        return [("mul", "scale_"), ("add", "min_")]
    return [("div", "scale_")]


def scaler_to_dict(scaler: Any) -> Dict[str, Any]:
    """The "scaler" field of a fitted StandardScaler, MinMaxScaler or MaxAbsScaler."""
    from sklearn import preprocessing

    kind = f"sklearn.preprocessing.{type(scaler).__name__}"
    # The classes themselves: a subclass may transform otherwise.
    if kind not in SCALER_TYPES or type(scaler) is not getattr(preprocessing, type(scaler).__name__):
        raise TypeError(f"not a scaler a model file holds: {type(scaler).__name__}")
    params = {k: json_value(k, v) for k, v in scaler.get_params(deep=False).items()}
    attributes: Dict[str, Any] = {}
    for key in SCALER_TYPES[kind]:
        value = getattr(scaler, key, None)
        if value is None:
            attributes[key] = None
        elif np.ndim(value) == 0:
            attributes[key] = value.item() if isinstance(value, np.generic) else value
        else:
            attributes[key] = [v.item() for v in np.asarray(value).reshape(-1)]
    names = getattr(scaler, "feature_names_in_", None)
    return {
        "type": kind,
        "params": params,
        "n_features_in": int(scaler.n_features_in_),
        "feature_names_in": None if names is None else [str(n) for n in names],
        "attributes": attributes,
    }


def scaler_spec(scaler: Any) -> ScalerSpec:
    """The checked spec of a fitted StandardScaler, MinMaxScaler or MaxAbsScaler, as a model
    file would hold it (``ValueError`` when it cannot be held: a scale that is not positive,
    ``clip=True``)."""
    return scaler_from_dict(scaler_to_dict(scaler))


# A scaler folded into what comes after it.


def folded_linear(spec: Any, coef: np.ndarray) -> Tuple[np.ndarray, float]:
    """Weights on the raw features and the constant: w . x' = weights . x + constant."""
    if spec is None:
        return np.asarray(coef, dtype=np.float64), 0.0
    a, b = spec.slope_intercept()
    return coef * a, float(np.dot(coef, b))


def raw_thresholds(spec: Any, j: int, k: np.ndarray) -> List[float]:
    """Feature j's thresholds over the raw feature (the scaler folded in), for any Binner."""
    if spec is None:
        return [float(t) for t in k]
    ops_j = [(op, float(v[j])) for op, v in spec.operations()]
    return [raw_threshold(ops_j, float(t), f"feature {j}") for t in k]


def raw_threshold(ops: Sequence[Tuple[str, float]], t: float, where: str) -> float:
    """The largest float64 T with f(T) <= t, for f the scaler's map of one feature (the
    operations applied in float64 as scikit-learn applies them), so that for every float64 x,
    f(x) > t exactly when x > T. f is non-decreasing (positive scales, and rounding keeps the
    order), so bisection over the float64 values in their order finds T."""

    def f(x: float) -> float:
        v = np.float64(x)
        for op, c in ops:
            v = v - c if op == "sub" else v / c if op == "div" else v * c if op == "mul" else v + c
        return float(v)

    with np.errstate(all="ignore"):
        # Huge values may scale to +-inf, which is still in order.
        return _bisect(f, t, where)


def _bisect(f: Any, t: float, where: str) -> float:
    lo, hi = _float_key(-np.inf), _float_key(np.inf)
    if not f(-np.inf) <= t < f(np.inf):
        raise ValueError(f"{where}: the scaler maps no value to the threshold {t!r}")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if f(_key_float(mid)) <= t:
            lo = mid
        else:
            hi = mid
    found = _key_float(lo)
    if not np.isfinite(found):
        # Every finite value scales above t: the indicator is 1 for every document, which a
        # finite threshold cannot say.
        raise ValueError(f"{where}: every finite value is scaled above the threshold {t!r}; it cannot be exported")
    return found


def _float_key(x: float) -> int:
    """An integer in the order of the float64 values (-0.0 and 0.0 share 0)."""
    bits = int(np.array(x, dtype=np.float64).view(np.int64))
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def _key_float(k: int) -> float:
    bits = k if k >= 0 else (-k) | -0x8000000000000000
    return float(np.array(bits, dtype=np.int64).view(np.float64))
