"""A Griffe extension for the API reference: parameter defaults and fit docstrings read from the
running package.

The defaults have one home, the table of ``svmmap._fit.defaults`` (the training and binning
ones read from the Rust core), and the Python signatures read them from it
(``C: float = TRAINING_DEFAULTS["C"]``). Griffe reads the source without running it, so the
rendered signatures showed that expression, which tells a reader nothing. For every function
whose signature names a private object or one of the tables in a default, this extension
imports the function, asks ``inspect.signature`` for the values, and shows their ``repr``
instead (``C=1.0``).

The fit methods share one docstring template (``svmmap._fit.request.fit_doc``, as LightGBM's
estimators share theirs), assigned when the class is made (``fit.__doc__ = fit_doc(...)``), so
the source holds no docstring for Griffe to read: for a public method without one, this
extension takes the docstring the imported method has.

mkdocs.yml loads it (``extensions:`` of the mkdocstrings Python handler); the site is built with
svmmap installed, as the API reference already requires.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import griffe

#: A name that starts with an underscore, not inside another name (``DEFAULT_CS`` is public), or
#: a look-up in one of the tables of defaults (``TRAINING_DEFAULTS["C"]``).
_PRIVATE_NAME = re.compile(r"(?<![\w.'\"])_[A-Za-z]\w*|(?<![\w.])[A-Z]+_DEFAULTS\[")


def names_private_object(default: Any) -> bool:
    """Whether a default, as Griffe read it from the source, refers to a private name or to a
    table of defaults."""
    return default is not None and _PRIVATE_NAME.search(str(default)) is not None


class RuntimeDefaults(griffe.Extension):
    """Replaces defaults that refer to private names by the values the package computes."""

    def on_function(self, *, func: griffe.Function, **kwargs: Any) -> None:
        if (
            func.docstring is None
            and not func.name.startswith("_")
            and func.parent is not None
            and func.parent.is_class
        ):
            doc = getattr(griffe.dynamic_import(func.path), "__doc__", None)
            if doc:
                # A docstring made here has no parser of its own; without the one the site's
                # other docstrings get (the agent's, mkdocs.yml's docstring_style: numpy), its
                # Parameters and Returns would render as Markdown headings.
                agent = kwargs.get("agent")
                parser = getattr(agent, "docstring_parser", None) or "numpy"
                options = getattr(agent, "docstring_options", None)
                func.docstring = griffe.Docstring(
                    inspect.cleandoc(doc), parent=func, parser=parser, parser_options=options
                )
        private = [p for p in func.parameters if names_private_object(p.default)]
        if not private:
            return
        runtime = griffe.dynamic_import(func.path)
        values = inspect.signature(runtime).parameters
        for parameter in private:
            value = values[parameter.name].default
            if value is inspect.Parameter.empty:
                raise griffe.ExtensionError(f"{func.path}: {parameter.name} has no default when imported")
            parameter.default = repr(value)
