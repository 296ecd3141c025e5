"""Read Inspect AI evaluation logs (``.eval`` zip or ``.json``) into an item-level table.

Standard library only (``json``, ``zipfile``). A log holds one task run by one model:
``eval.task``, ``eval.model``, ``eval.created`` and the samples, each with its ``id``
(→ item), ``epoch`` (→ run ``epoch - 1``) and ``scores`` (scorer → score). A score's
value becomes a number as Inspect's ``value_to_float`` does: ``C`` (correct) 1, ``I``
(incorrect) 0, ``P`` (partial) 0.5, ``N`` (no answer) 0, ``yes``/``true`` 1,
``no``/``false`` 0, numbers as they are. A ``.eval`` file is a zip of ``header.json``
(or ``_journal/start.json`` while the run was going) and ``samples/<id>_epoch_<n>.json``.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.validate import counted
from isbetter.items.table import ItemTable

__all__ = ["SCORE_VALUES", "is_inspect_json", "read_inspect"]

#: Inspect's letter scores and words as numbers (its ``value_to_float``)
SCORE_VALUES = {
    "C": 1.0,
    "I": 0.0,
    "P": 0.5,
    "N": 0.0,
    "yes": 1.0,
    "true": 1.0,
    "no": 0.0,
    "false": 0.0,
}


@dataclass
class _Log:
    path: Path
    header: dict[str, Any]
    samples: list[dict[str, Any]]

    @property
    def task(self) -> str:
        return str(self.header.get("eval", {}).get("task", self.path.stem))

    @property
    def model(self) -> str:
        return str(self.header.get("eval", {}).get("model", self.path.stem))

    @property
    def created(self) -> str:
        return str(self.header.get("eval", {}).get("created", ""))


def is_inspect_json(path: Path) -> bool:
    """Whether a ``.json`` file looks like an Inspect log (an object with ``eval``)."""
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"{") and b'"eval"' in head and b'"version"' in head[:200]


def _load(path: Path) -> _Log:
    try:
        if path.suffix == ".eval":
            return _load_zip(path)
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read {str(path)!r} as an Inspect log: {exc}") from exc
    if not isinstance(data, dict) or "eval" not in data:
        raise InputError(f"{str(path)!r} is not an Inspect log (a JSON object with 'eval')")
    samples = data.pop("samples", None) or []
    return _Log(path, data, samples)


def _load_zip(path: Path) -> _Log:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        head = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
        if head is None:
            raise InputError(
                f"{str(path)!r} is not an Inspect log: no header.json or _journal/start.json"
            )
        header = json.loads(zf.read(head))
        samples = [
            json.loads(zf.read(n))
            for n in sorted(names)
            if n.startswith("samples/") and n.endswith(".json")
        ]
    return _Log(path, header, samples)


def _value(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in SCORE_VALUES:
            return SCORE_VALUES[value]
        if value.lower() in SCORE_VALUES:
            return SCORE_VALUES[value.lower()]
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _rows(log: _Log, scorer: str | None, cluster: str | None) -> Iterator[dict[str, Any]]:
    where = repr(str(log.path))
    if not log.samples:
        raise InputError(
            f"{where} has no samples (was it written with --no-log-samples?): nothing to pair"
        )
    scorers = list(dict.fromkeys(k for s in log.samples for k in (s.get("scores") or {})))
    if not scorers:
        raise InputError(f"{where} has no scores: score the log (inspect score) first")
    if scorer is None:
        if len(scorers) > 1:
            raise InputError(
                f"{where} holds {counted(len(scorers), 'scorer')} ({', '.join(scorers)}): "
                "choose one with `scorer`"
            )
        scorer = scorers[0]
    elif scorer not in scorers:
        raise InputError(
            f"`scorer`: no scorer {scorer!r} in {where}; present: {', '.join(scorers)}"
        )
    for sample in log.samples:
        ident, epoch = sample.get("id"), sample.get("epoch", 1)
        label = f"{where}: sample {ident!r} epoch {epoch}"
        score = (sample.get("scores") or {}).get(scorer)
        if score is None:
            error = sample.get("error")
            reason = f" (it failed: {str(error.get('message', error))[:80]})" if error else ""
            raise InputError(f"{label} has no {scorer!r} score{reason}")
        raw = score.get("value") if isinstance(score, dict) else score
        value = _value(raw)
        if value is None or not math.isfinite(value):
            raise InputError(f"{label}: score {raw!r} of {scorer!r} is not a number or C/I/P/N")
        row = {"item": ident, "run": int(epoch) - 1, "score": value}
        if cluster is not None:
            metadata = sample.get("metadata") or {}
            if cluster not in metadata:
                raise InputError(
                    f"`cluster`: {label} has no metadata key {cluster!r} "
                    f"(its keys: {', '.join(map(str, metadata)) or 'none'})"
                )
            row["cluster"] = metadata[cluster]
        yield row


def read_inspect(
    paths: Sequence[str | os.PathLike[str]],
    *,
    scorer: str | None = None,
    runs: str = "latest",
    cluster: str | None = None,
) -> ItemTable:
    """Read Inspect logs into an :class:`ItemTable`: task, model, sample id, epoch, score.

    Parameters
    ----------
    paths : sequence of path
        ``.eval`` or ``.json`` log files.
    scorer : str, optional
        The scorer whose values are read; default the only one.
    runs : {"latest", "all"}
        Several logs of one task and model: the latest by ``eval.created`` (the others
        noted), or all, their epochs numbered on (a log of 3 epochs then one of 2 give
        runs 0–4).
    cluster : str, optional
        A key of the samples' ``metadata`` whose value is the item's cluster.

    Returns
    -------
    ItemTable
        The metric is the scorer's name.

    Raises
    ------
    InputError
        A file that is not an Inspect log, a log with no samples or no scores, a sample
        without the scorer's score, a value that is not a number or C/I/P/N, several
        scorers and none chosen, a missing metadata key.
    """
    if runs not in ("latest", "all"):
        raise InputError(f"`runs` must be 'latest' or 'all', got {runs!r}")
    logs: dict[tuple[str, str], list[_Log]] = {}
    for path in map(Path, paths):
        log = _load(path)
        logs.setdefault((log.task, log.model), []).append(log)
    notes: list[str] = []
    frames = []
    scorers: set[str] = set()
    for (task, model), group in logs.items():
        group.sort(key=lambda g: g.created)
        if runs == "latest" and len(group) > 1:
            notes.append(
                f"{task} by {model}: read the latest of {len(group)} logs "
                f"({group[-1].path.name}); `runs='all'` reads every log"
            )
            group = group[-1:]
        offset = 0
        for log in group:
            if log.header.get("status", "success") != "success":
                notes.append(f"{log.path.name}: status {log.header.get('status')!r}")
            frame = pd.DataFrame(list(_rows(log, scorer, cluster)))
            frame["run"] += offset
            offset = int(frame["run"].max()) + 1
            frame["task"], frame["system"] = task, model
            frames.append(frame)
            scorer_names = {k for s in log.samples for k in (s.get("scores") or {})}
            scorers |= {scorer} if scorer else scorer_names
    data = pd.concat(frames, ignore_index=True)
    files = sum(len(g) for g in logs.values())
    source = (
        f"Inspect: {counted(files, 'log')}, {counted(data['system'].nunique(), 'model')}, "
        f"scorer {', '.join(sorted(scorers))}; C/I/P/N = 1/0/0.5/0; run = epoch - 1"
    )
    return ItemTable(data, metric=", ".join(sorted(scorers)), source=source, notes=tuple(notes))
