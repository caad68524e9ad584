"""What the messages of a fit call the estimator: the estimator the user called, which is not
always the one that fits (SVMMapCV refits an SVMMap of its own)."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator, Optional

__all__ = ["called_as", "estimator_name"]

#: The estimator the user called, when it fits an SVMMap of its own (SVMMapCV's refit): the
#: warnings of that fit name it, since the user never called SVMMap ("SVMMap stopped at
#: max_iter=1" came out of SVMMapCV.fit). A context variable, so that the name holds in the one
#: thread (and context) that runs that fit and nowhere else.
_called_as: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("svmmap_called_as", default=None)


@contextlib.contextmanager
def called_as(name: str) -> Iterator[None]:
    """Makes the messages of the fits run inside name the estimator ``name``."""
    token = _called_as.set(name)
    try:
        yield
    finally:
        _called_as.reset(token)


def estimator_name(model: Any) -> str:
    """What messages call the model: the estimator the user called (``called_as``), else its
    class name, or SVMMap for a BareSVMMap."""
    called = _called_as.get()
    if called is not None:
        return called
    return str(getattr(model, "display_name", type(model).__name__))
