"""The example data shipped inside the package: ``isbetter demo``, the README and notebooks use it.

:func:`path` gives the file of a name, wherever isbetter is installed and
whatever the working directory::

    >>> import isbetter.example_data
    >>> isbetter.example_data.path("uci").name
    'uci_cv_accuracy_long.csv'

========== ===========================================================================
name       file
========== ===========================================================================
uci        five Weka classifiers on 54 UCI data sets, 10 runs of 10-fold CV, long form
           (``dataset_id, classifier, run, fold, accuracy``, ...; Benavoli et al. 2017)
uci_means  the same, mean accuracy per data set: one row per data set, one column per
           classifier
f1_example synthetic per-document predictions: 2 000 documents, four topics, ``gold``
           and the systems ``svm``, ``logreg``, ``nb``
f1_20class synthetic per-document predictions: 7 532 documents, 20 classes, ``gold``
           and the systems ``svm``, ``nb``
========== ===========================================================================

In a checkout of the repository the same files are reachable as ``data/...``
(symbolic links to these); ``data/README.md`` states their origin and columns.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.resources
from pathlib import Path

__all__ = ["NAMES", "path"]

#: name -> file in this package
NAMES: dict[str, str] = {
    "uci": "uci_cv_accuracy_long.csv",
    "uci_means": "uci_mean_accuracy.csv",
    "f1_example": "f1_example_predictions.csv",
    "f1_20class": "f1_20class_predictions.csv",
}

# files extracted from a zipped install stay until the interpreter exits
_KEPT = contextlib.ExitStack()
atexit.register(_KEPT.close)


def path(name: str) -> Path:
    """Return the path of the example data file `name` (one of :data:`NAMES`).

    Parameters
    ----------
    name : str
        ``"uci"``, ``"uci_means"``, ``"f1_example"`` or ``"f1_20class"``.

    Returns
    -------
    pathlib.Path
        A file on disk: in the installed package (a zipped install extracts it to a
        temporary file kept until the interpreter exits).

    Raises
    ------
    InputError
        `name` is not one of :data:`NAMES`.
    """
    from isbetter.core.validate import check_choice

    name = check_choice(name, "name", tuple(NAMES))
    resource = importlib.resources.files(__name__) / NAMES[name]
    # a file of an installed package is already a path: as_file returns it unchanged
    return _KEPT.enter_context(importlib.resources.as_file(resource))
