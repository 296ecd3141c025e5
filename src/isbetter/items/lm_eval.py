"""Read lm-evaluation-harness output folders (``--log_samples``) into an item-level table.

lm-evaluation-harness writes, per model, ``samples_<task>_<time>.jsonl`` (one JSON
object per (document, filter): ``doc_id``, ``doc``, ``filter``, ``doc_hash`` and the
metric values as top-level keys) and ``results_<time>.json`` (aggregates,
``group_subtasks``, ``model_name``, ``config``). Runs of one task at several times
are several samples files of one folder.

What is read, and the choices made (each recorded in the table's ``source`` or
``notes``):

* **model** — ``model_name`` of the results file of the same time (a path is cut to
  its last component), else ``pretrained=`` of ``config.model_args``, else the folder's
  name; ``names`` maps a folder's name to another.
* **metric** — given, or the only one the task's lines hold, or ``acc`` when present
  among several; otherwise an error listing those present.
* **filter** — given, or the only one, or ``none`` when present among several;
  otherwise an error listing those present. Files without a ``filter`` key (older
  versions) hold one block of lines per filter, in the order of the results file:
  accepted when the blocks' means equal the results' values.
* **runs** — ``"latest"``: the latest samples file per model and task (the others are
  listed in the notes, not read); ``"all"``: every file, numbered 0, 1, … in time
  order.
* **items** — (task, ``doc_id``); a ``doc_hash`` that differs between two files for one
  (task, ``doc_id``) is an error naming both files.
* **a run where every item scores 0** is kept (a small model can score 0 everywhere,
  as the real ``math_perturbed`` log does) and noted, since it is also what a broken
  prompt or answer filter gives (the ``ko_winogrande`` logs).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.validate import counted
from isbetter.items.table import ItemTable

__all__ = ["find_model_folders", "read_lm_eval"]

_TIME = r"\d{4}-\d{2}-\d{2}T[0-9.\-]+"
_SAMPLES = re.compile(rf"^samples_(?P<task>.+)_(?P<time>{_TIME})\.jsonl$")
_RESULTS = re.compile(rf"^results_(?P<time>{_TIME})\.json$")

#: top-level keys of a samples line that are not metric values
_NOT_METRICS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
    }
)
_PREFIX = b'{"doc_id": '
_TAILS = (b', "filter": ', b', "doc_hash": ')
_DOC = b', "doc": '
_DECODER = json.JSONDecoder()


@dataclass
class _Folder:
    """One model's output folder: its samples files by task, its results files by time."""

    path: Path
    samples: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)
    results: dict[str, Path] = field(default_factory=dict)


@dataclass
class _Lines:
    """The lines of one samples file for one filter; columns taken on demand."""

    path: Path
    filter: str
    records: list[dict[str, Any]]
    line: np.ndarray
    metrics: list[str]
    full: bool = False

    @property
    def doc_id(self) -> np.ndarray:
        return np.array([r["doc_id"] for r in self.records])

    @property
    def doc_hash(self) -> list[Any]:
        return [r.get("doc_hash") for r in self.records]

    @property
    def doc(self) -> list[Any] | None:
        return [r.get("doc") for r in self.records] if self.full else None

    def values(self, metric: str) -> list[Any]:
        """Return the metric's value on each line (None where a line lacks it)."""
        return [r.get(metric) for r in self.records]

    def part(self, rows: slice, name: str) -> _Lines:
        """Return some of the lines, under another filter's name."""
        return _Lines(self.path, name, self.records[rows], self.line[rows], self.metrics, self.full)


def find_model_folders(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Return the model folders under `paths`: folders holding samples or results files.

    Raises
    ------
    InputError
        A path holds no lm-evaluation-harness output.
    """
    folders: list[Path] = []
    for path in map(Path, paths):
        found = sorted(
            {
                Path(root)
                for root, _dirs, files in os.walk(path)
                if any(_SAMPLES.match(f) or _RESULTS.match(f) for f in files)
            }
        )
        if not found:
            raise InputError(
                f"{str(path)!r} holds no lm-evaluation-harness output "
                "(samples_<task>_<time>.jsonl, results_<time>.json)"
            )
        folders += [f for f in found if f not in folders]
    return folders


def _scan(path: Path) -> _Folder:
    folder = _Folder(path)
    for name in sorted(os.listdir(path)):
        if m := _SAMPLES.match(name):
            folder.samples.setdefault(m["task"], []).append((m["time"], path / name))
        elif m := _RESULTS.match(name):
            folder.results[m["time"]] = path / name
    if not folder.samples:
        raise InputError(
            f"folder {str(path)!r} has {counted(len(folder.results), 'results file')} but no "
            "samples_<task>_<time>.jsonl: run lm-evaluation-harness with --log_samples, "
            "or leave the folder out"
        )
    for runs in folder.samples.values():
        runs.sort()
    return folder


def _load_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {str(path)!r} as JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError(f"{str(path)!r} is not a results file (a JSON object)")
    return data


def _short(name: str) -> str:
    """Return a model's name as given, or a path's last component."""
    name = name.strip()
    if name.startswith(("/", "./", "../", "~")) or "\\" in name:
        return re.split(r"[\\/]", name.rstrip("/\\"))[-1] or name
    return name


def _model_name(results: dict[str, Any] | None, folder: Path) -> str:
    if results:
        name = results.get("model_name")
        if isinstance(name, str) and name.strip():
            return _short(name)
        args = (results.get("config") or {}).get("model_args")
        if isinstance(args, str) and (m := re.search(r"(?:^|,)pretrained=([^,]+)", args)):
            return _short(m.group(1))
    return folder.name


def _parse(raw: bytes, path: Path, number: int) -> dict[str, Any]:
    """Parse one whole samples line, or raise naming the file and line."""
    try:
        record = json.loads(raw)
    except ValueError as exc:
        raise InputError(
            f"{str(path)!r} line {number}: not a JSON object ({exc}); lm-evaluation-harness "
            "writes one JSON object a line (was the file wrapped or edited?)"
        ) from exc
    if not isinstance(record, dict) or "doc_id" not in record:
        raise InputError(f"{str(path)!r} line {number}: not a samples line (no doc_id)")
    return record


def _parse_tails(data: bytes, docs: bool = False) -> tuple[list[dict[str, Any]], list[int]] | None:
    """Parse the lines' ends only (filter, hashes, metrics), all in one JSON call.

    lm-evaluation-harness writes ``{"doc_id": N, "doc": …, …, "filter": …, "metrics":
    …, "doc_hash": …, …, "<metric>": value}`` with ``json.dumps``'s separators; a quote
    inside a string is escaped, so the last ``, "filter": `` of a line is the top-level
    key. With `docs`, each line's ``doc`` is parsed too (not its prompts and answers).
    Returns None (parse every line whole) when a line is not of that shape.
    """
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    if data and not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    if not ends.size:
        return [], []
    starts = np.concatenate(([0], ends[:-1] + 1))
    keep = ends > starts  # a blank line is skipped; a line of spaces takes the slow path
    numbers = (np.flatnonzero(keep) + 1).tolist()
    heads, tails, texts = [], [], []
    startswith, rfind, find = data.startswith, data.rfind, data.find
    first = len(_PREFIX)
    for s, e in zip(starts[keep].tolist(), ends[keep].tolist(), strict=True):
        if not startswith(_PREFIX, s):
            return None
        i = rfind(_TAILS[0], s, e)
        if i < 0:
            i = rfind(_TAILS[1], s, e)
            if i < 0:
                return None
        comma = find(b",", s + first, e)
        heads.append(data[s + first : comma])
        tails.append(data[i + 2 : e].rstrip())
        if docs:
            if not startswith(_DOC, comma):
                return None
            texts.append(data[comma + len(_DOC) : i])
    try:
        ids = np.asarray(json.loads(b"[" + b",".join(heads) + b"]"))
        records = json.loads(b"[{" + b",{".join(tails) + b"]")
        if len(records) != len(tails) or ids.dtype.kind != "i":
            return None
        for record, doc_id in zip(records, ids.tolist(), strict=True):
            record["doc_id"] = doc_id
        for record, text in zip(records, texts, strict=False):
            record["doc"] = _DECODER.raw_decode(text.decode("utf-8"))[0]
    except (ValueError, TypeError):  # not JSON, or an element that is not an object
        return None
    return records, numbers


def _metric_keys(record: dict[str, Any]) -> list[str]:
    """Return the metrics of a line: its ``metrics`` list, else its other top-level keys."""
    if isinstance(record.get("metrics"), list):
        return [str(m) for m in record["metrics"]]
    return [k for k in record if k not in _NOT_METRICS]


def _read_samples(path: Path, *, full: bool) -> dict[str | None, _Lines]:
    """Read one samples file into arrays per filter (None: lines name no filter)."""
    with open(path, "rb") as fh:
        data = fh.read()
    fast = _parse_tails(data, docs=full)
    if fast is not None:
        records, numbers = fast
    else:
        lines = data.split(b"\n")
        numbers = [n for n, raw in enumerate(lines, start=1) if raw and not raw.isspace()]
        records = [_parse(lines[n - 1], path, n) for n in numbers]
    if not records:
        raise InputError(f"{str(path)!r} has no lines: an empty samples file")
    keys = [r.get("filter") for r in records]
    out: dict[str | None, _Lines] = {}
    several = len(set(keys)) > 1
    for key in dict.fromkeys(keys):
        rows = [k for k, f in enumerate(keys) if f == key] if several else None
        block = records if rows is None else [records[k] for k in rows]
        lines_of = numbers if rows is None else [numbers[k] for k in rows]
        out[key] = _Lines(path, str(key), block, np.array(lines_of), _metric_keys(block[0]), full)
    return out


def _split_unnamed(
    block: _Lines, results: dict[str, Any] | None, task: str, notes: list[str]
) -> dict[str, _Lines]:
    """Lines without a ``filter`` key: one block per filter of the results file, checked."""
    ids = block.doc_id
    unique = pd.unique(ids)
    filters: list[str] = []
    aggregates: dict[str, float] = {}
    for key, value in ((results or {}).get("results", {}).get(task) or {}).items():
        metric, _, name = str(key).partition(",")
        if name and not metric.endswith("_stderr"):
            if name not in filters:
                filters.append(name)
            aggregates.setdefault(f"{metric},{name}", value)
    if len(unique) == len(ids):
        if len(filters) > 1:
            raise InputError(
                f"{str(block.path)!r}: the lines name no filter and the results file of the "
                f"same time lists {len(filters)} ({', '.join(filters)}): cannot tell which "
                "filter the lines are"
            )
        name = filters[0] if filters else "none"
        return {name: block.part(slice(None), name)}
    k, n = len(ids) // len(unique), len(unique)
    blocks_ok = len(ids) == k * n and all(
        np.array_equal(ids[j * n : (j + 1) * n], ids[:n]) for j in range(k)
    )
    if not blocks_ok or len(filters) != k:
        raise InputError(
            f"{str(block.path)!r}: doc_id {unique[0]!r} occurs {np.sum(ids == unique[0])} times "
            "and the lines name no filter; the results file of the same time lists "
            f"{counted(len(filters), 'filter')} ({', '.join(filters) or 'none'}): "
            "cannot tell which line is which filter"
        )
    out = {}
    for j, name in enumerate(filters):
        part = slice(j * n, (j + 1) * n)
        lines = block.part(part, name)
        for metric in lines.metrics:
            expected = aggregates.get(f"{metric},{name}")
            if expected is None:
                continue
            got = float(np.mean(np.asarray(lines.values(metric), dtype=float)))
            if not np.isclose(got, float(expected)):
                raise InputError(
                    f"{str(block.path)!r}: the lines name no filter, and block {j + 1} of "
                    f"{k} has mean {metric} {got:.6g} where the results file gives "
                    f"{float(expected):.6g} for filter {name!r}: cannot tell the filters apart"
                )
        out[name] = lines
    notes.append(
        f"{block.path.name}: the lines name no filter; blocks of {n} lines taken as the "
        f"filters {', '.join(filters)} in the results file's order (their means agree)"
    )
    return out


def _choose(
    kind: str, given: str | None, present: Sequence[str], default: str, where: str
) -> tuple[str, str]:
    """Choose the metric or filter: (the choice, how it was chosen)."""
    present = list(dict.fromkeys(present))
    if given is not None:
        if given not in present:
            raise InputError(
                f"`{kind}`: no {kind} {given!r} in {where}; present: {', '.join(present)}"
            )
        return given, "asked"
    if len(present) == 1:
        return present[0], "the only one"
    if default in present:
        return (
            default,
            f"the default; also present: {', '.join(p for p in present if p != default)}",
        )
    raise InputError(
        f"{where} holds {counted(len(present), kind)} ({', '.join(present)}): "
        f"choose one with `{kind}`"
    )


def _score_array(values: list[Any], lines: _Lines, metric: str, task: str) -> np.ndarray:
    try:
        scores = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        scores = None
    if scores is None or scores.ndim != 1:
        i = next(i for i, v in enumerate(values) if not isinstance(v, int | float | bool))
        value = values[i]
        if isinstance(value, list) and len(value) == 2:
            raise InputError(
                f"{str(lines.path)!r} line {lines.line[i]}: metric {metric!r} of task {task!r} "
                f"holds [gold, prediction] pairs, not a per-item score: a corpus-level "
                "metric such as F1; compare two systems' predictions with the paired F1 "
                "model (isbetter f1), or choose a per-item metric with `metric`"
            )
        raise InputError(
            f"{str(lines.path)!r} line {lines.line[i]}: metric {metric!r} is {value!r}, "
            "not a number"
        )
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{str(lines.path)!r} line {lines.line[i]}: metric {metric!r} is "
            f"{values[i]!r}, not a finite number ({counted(int(bad.sum()), 'line')} like it)"
        )
    return scores


def _doc_field(doc: Any, key: str, lines: _Lines, i: int, argument: str) -> str:
    value: Any = doc
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            keys = ", ".join(map(str, doc)) if isinstance(doc, dict) else "none"
            raise InputError(
                f"`{argument}`: {str(lines.path)!r} line {lines.line[i]}: the doc has no "
                f"field {key!r} (its fields: {keys})"
            )
        value = value[part]
    return str(value)


@dataclass
class _Run:
    """One samples file read: its model, run number and lines per filter."""

    system: str
    run: int
    path: Path
    blocks: dict[str, _Lines]


def _check_filter(runs: Sequence[_Run], name: str) -> None:
    for r in runs:
        if name not in r.blocks:
            raise InputError(
                f"`filter`: no filter {name!r} in {str(r.path)!r}; present: {', '.join(r.blocks)}"
            )


def _choose_metric_filter(
    task: str,
    runs: Sequence[_Run],
    metric: str | None,
    filter: str | None,  # noqa: A002
) -> tuple[str, str, str, str]:
    """Return one task's metric and filter, and how each was chosen, over all its files."""
    where = f"the samples of task {task!r}"
    if filter is not None:
        _check_filter(runs, filter)
    filters = [f for r in runs for f in r.blocks]
    chosen_filter, how_f = _choose("filter", filter, filters, "none", where)
    _check_filter(runs, chosen_filter)
    values = [r.blocks[chosen_filter].metrics for r in runs]
    metrics = [m for v in values for m in v]
    common = [m for m in dict.fromkeys(metrics) if all(m in v for v in values)]
    if metric is not None:
        for r, v in zip(runs, values, strict=True):
            if metric not in v:
                raise InputError(
                    f"`metric`: no metric {metric!r} in {str(r.path)!r}; present: "
                    f"{', '.join(v) or 'none'}"
                )
    chosen_metric, how_m = _choose("metric", metric, common or metrics, "acc", where)
    return chosen_metric, how_m, chosen_filter, how_f


def _columns(
    task: str, r: _Run, lines: _Lines, metric: str, subtask: str | None, cluster: str | None
) -> dict[str, Any]:
    """One file's rows as columns: task, item, system, run, score, and its hashes and lines."""
    scores = _score_array(lines.values(metric), lines, metric, task)
    n = len(scores)
    doc_id = lines.doc_id
    if len(pd.unique(doc_id)) < n:
        i = int(np.flatnonzero(pd.Series(doc_id).duplicated().to_numpy())[0])
        raise InputError(
            f"{str(lines.path)!r} line {lines.line[i]}: doc_id {doc_id[i]} occurs "
            f"twice for filter {lines.filter!r}"
        )
    columns: dict[str, Any] = {
        "task": [task] * n,
        "item": doc_id,
        "system": [r.system] * n,
        "run": np.full(n, r.run),
        "score": scores,
        "doc_hash": lines.doc_hash,
        "line": lines.line,
        "file": [str(lines.path)] * n,
        "cluster": [None] * n,
    }
    if lines.doc is not None:
        docs = list(enumerate(lines.doc))
        if subtask is not None:
            columns["task"] = [
                f"{task}/{_doc_field(d, subtask, lines, i, 'subtask')}" for i, d in docs
            ]
        if cluster is not None:
            columns["cluster"] = [_doc_field(d, cluster, lines, i, "cluster") for i, d in docs]
    return columns


def read_lm_eval(
    paths: Sequence[str | os.PathLike[str]],
    *,
    metric: str | None = None,
    filter: str | None = None,  # noqa: A002 - lm-evaluation-harness's word
    runs: str = "latest",
    subtask: str | None = None,
    cluster: str | None = None,
    names: Mapping[str, str] | None = None,
) -> ItemTable:
    """Read lm-evaluation-harness ``--log_samples`` output folders into an :class:`ItemTable`.

    Parameters
    ----------
    paths : sequence of path
        Model folders, or folders holding them (searched recursively).
    metric : str, optional
        The per-item metric (``acc``, ``acc_norm``, ``exact_match``); default the only
        one present, else ``acc`` if present.
    filter : str, optional
        The answer filter (``none``, ``strict-match``, ``get-answer``); default the
        only one present, else ``none`` if present.
    runs : {"latest", "all"}
        The latest samples file of each model and task, or all as runs 0, 1, ….
    subtask : str, optional
        A field of the doc (``type``, ``category``; dots reach into nested fields)
        splitting each task into subtasks ``<task>/<value>``.
    cluster : str, optional
        A field of the doc whose value is the item's cluster (items sharing a passage).
    names : mapping, optional
        A model folder's name → the system's name (to tell apart two folders whose
        results files name one model).

    Returns
    -------
    ItemTable
        One task per lm-evaluation-harness task (or subtask); ``groups`` from the
        results files' ``group_subtasks``.

    Raises
    ------
    InputError
        As the module says: a folder with no samples file, a line that is not JSON, a
        metric or filter not in a log, two models on different documents under one
        doc_id, a task only one model has, a score that is not a finite number.
    """
    if runs not in ("latest", "all"):
        raise InputError(f"`runs` must be 'latest' or 'all', got {runs!r}")
    names = dict(names or {})
    full = subtask is not None or cluster is not None
    notes: list[str] = []
    groups: dict[str, list[str]] = {}
    systems: dict[str, Path] = {}
    # (task, system) -> [(run, lines, results)]
    chosen_files: dict[tuple[str, str], list[tuple[str, Path, dict[str, Any] | None]]] = {}
    for folder in map(_scan, find_model_folders(paths)):
        results = {time: _load_json(p) for time, p in folder.results.items()}
        latest = results[max(results)] if results else None
        for task, files in folder.samples.items():
            kept = files[-1:] if runs == "latest" else files
            if len(kept) < len(files):
                notes.append(
                    f"{folder.path.name}: {task}: read the latest of {len(files)} runs "
                    f"({kept[0][1].name}); `runs='all'` reads every run"
                )
            for time, path in kept:
                res = results.get(time)
                system = names.get(folder.path.name) or _model_name(res or latest, folder.path)
                if systems.setdefault(system, folder.path) != folder.path:
                    raise InputError(
                        f"folders {str(systems[system])!r} and {str(folder.path)!r} both hold "
                        f"model {system!r}: name them apart with `names`"
                    )
                chosen_files.setdefault((task, system), []).append((time, path, res))
        for res in results.values():
            for group, members in (res.get("group_subtasks") or {}).items():
                if members:
                    groups.setdefault(group, [])
                    groups[group] += [m for m in members if m not in groups[group]]

    per_task: dict[str, list[_Run]] = defaultdict(list)
    for (task, system), read in chosen_files.items():
        for run, (_time, path, res) in enumerate(read):
            blocks = _read_samples(path, full=full)
            named = {str(k): v for k, v in blocks.items() if k is not None}
            if None in blocks:
                named |= _split_unnamed(blocks[None], res, task, notes)
            per_task[task].append(_Run(system, run, path, named))

    parts: list[dict[str, Any]] = []
    choices = set()
    for task, read_runs in sorted(per_task.items()):
        chosen_metric, how_m, chosen_filter, how_f = _choose_metric_filter(
            task, read_runs, metric, filter
        )
        choices.add((chosen_metric, how_m, chosen_filter, how_f))
        for r in read_runs:
            lines = r.blocks[chosen_filter]
            part = _columns(task, r, lines, chosen_metric, subtask, cluster)
            if len(part["score"]) and not part["score"].any():
                notes.append(
                    f"{lines.path.name} ({r.system}, {task}): every item scores 0 on "
                    f"{chosen_metric}; kept — check the prompt and the answer filter if "
                    "that is not the model's real result"
                )
            parts.append(part)
    data = pd.DataFrame(
        {
            key: np.concatenate([np.asarray(p[key], dtype=object) for p in parts])
            if key in ("task", "system", "doc_hash", "file", "cluster")
            else np.concatenate([p[key] for p in parts])
            for key in parts[0]
        }
    )
    _check_hashes(data)
    metrics_used = sorted({c[0] for c in choices})
    source = (
        f"lm-evaluation-harness: {counted(data['system'].nunique(), 'model')}, "
        f"{counted(data['task'].nunique(), 'task')}; "
        + "; ".join(f"metric {m} ({hm}), filter {f} ({hf})" for m, hm, f, hf in sorted(choices))
        + f"; runs: {runs}"
    )
    tasks = set(data["task"].unique())
    split: dict[str, list[str]] = defaultdict(list)
    for t in sorted(tasks):
        split[t.split("/", 1)[0] if subtask is not None else t].append(t)
    if subtask is not None:
        groups |= {task: split[task] for task in per_task}
    leaf_groups = _leaves(groups, split)
    return ItemTable(
        data.drop(columns=["doc_hash", "line", "file"]),
        metric=", ".join(metrics_used),
        source=source,
        notes=tuple(notes),
        groups=leaf_groups,
    )


def _leaves(
    groups: Mapping[str, Sequence[str]], split: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """Each group's tasks in the table: nested groups flattened, split tasks replaced."""

    def leaves(name: str, seen: frozenset[str]) -> list[str]:
        if name in seen:
            return []
        if name in split:
            return list(split[name])
        return [leaf for m in groups.get(name, ()) for leaf in leaves(m, seen | {name})]

    out = {}
    for group in groups:
        members = sorted(set(leaves(group, frozenset())))
        if members and members != [group]:
            out[group] = tuple(members)
    return out


def _check_hashes(data: pd.DataFrame) -> None:
    """One document per (task, doc_id) over every file read."""
    known = data[data["doc_hash"].notna()]
    if known.empty:
        return
    codes = pd.Series(pd.factorize(known["doc_hash"])[0], index=known.index)
    spread = codes.groupby([known["task"], known["item"]], sort=False).agg(["min", "max"])
    bad = spread[spread["min"] != spread["max"]]
    if bad.empty:
        return
    task, item = bad.index[0]
    rows = known[(known["task"] == task) & (known["item"] == item)]
    first = rows.iloc[0]
    other = rows[rows["doc_hash"] != first["doc_hash"]].iloc[0]
    raise InputError(
        f"task {task!r}, doc_id {item}: different documents in {first['file']!r} line "
        f"{first['line']} ({first['system']}) and {other['file']!r} line {other['line']} "
        f"({other['system']}) (their doc_hash differ; {counted(len(bad), 'doc_id')} like "
        "it): were they evaluated on different versions of the data set?"
    )
