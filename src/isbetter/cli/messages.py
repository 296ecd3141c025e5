"""Say the library's error messages in the command line's words: flags, not Python arguments.

The library's messages name its Python arguments (`` `system_b` ``, ``pass
`drop_incomplete=True` ``, ``rope=0.01``); a user of ``isbetter cv`` typed
``--b``, ``--drop-incomplete`` and ``--rope 0.01``. :func:`cli_message` rewrites a
message for the subcommand that raised it: argument names become the flags that
set them, column names are followed by the flag that named them, and NumPy scalar
reprs (``np.int64(1)``) become plain values. It is applied to every
:class:`~isbetter.IsbetterError` the command line prints.
"""

from __future__ import annotations

import argparse
import re
from functools import partial

__all__ = ["cli_message", "stopped_message"]

#: Python argument -> flag, where the same name means the same thing in every subcommand
_FLAGS = {
    "rope": "--rope",
    "draws": "--draws",
    "chains": "--chains",
    "tune": "--tune",
    "rng": "--seed",
    "seed": "--seed",
    "rho": "--rho",
    "concentration": "--concentration",
    "ties": "--ties",
    "prior": "--prior",
    "method": "--method",
    "model": "--model",
    "models": "--model",
    "measure": "--metric",
    "beta": "--beta",
    "cost_fn": "--cost-fn",
    "cost_fp": "--cost-fp",
    "p_positive": "--p-positive",
    "positive": "--positive",
    "resamples": "--resamples",
    "pool": "--pool",
    "sizes": "--sizes",
    "replicates": "--replicates",
    "goal": "--goal",
    "mu": "--mu",
    "theta_pos": "--theta-pos",
    "theta_neg": "--theta-neg",
    "rule": "--rule",
    "threshold": "--threshold",
    "margin": "--margin",
    "jobs": "--jobs",
    "cache_dir": "--cache-dir",
    "executor": "--scheduler",
    "systems": "--systems",
    "metric": "--metric",
    "metrics": "--metric",
    "score": "--metric",
    "higher_is_better": "--lower-is-better",
    "drop_incomplete": "--drop-incomplete",
    "dataset": "--dataset",
    "system": "--system-col",
    "run": "--run-col",
    "fold": "--fold-col",
    "wide": "--wide",
    "system_a": "--a",
    "system_b": "--b",
    "classes": "--class",
    "source": "FILE",
}

#: Python argument -> flag of `isbetter tagging` alone (`runs` and `folds` of read_scores have
#: no flag in the other subcommands, so they cannot join _FLAGS)
_TAGGING_FLAGS = {
    "runs": "--runs",
    "folds": "--folds",
    "dev": "--dev",
    "by": "--by",
    "out": "--out",
    "names": "--names",
    "predictions": "--predictions",
    "column": "--tag-column",
}
#: Python argument -> flag of `isbetter items` alone (the readers' options; `task` is the task
#: compared: the command line names no task column)
_ITEMS_FLAGS = {
    "filter": "--filter",
    "cluster": "--cluster",
    "runs": "--runs",
    "run_suffix": "--run-suffix",
    "task": "--task",
}


def _command_flags(args: argparse.Namespace) -> dict[str, str]:
    """Python argument -> flag for the subcommand of `args`: the common ones and its own.

    ``rank --items`` reads logs as ``items`` does, but compares on every task (no --task).
    """
    command = getattr(args, "command", "")
    if command == "tagging":
        return _FLAGS | _TAGGING_FLAGS
    if command == "items":
        return _FLAGS | _ITEMS_FLAGS
    if command == "rank" and getattr(args, "items", False):
        return _FLAGS | {k: v for k, v in _ITEMS_FLAGS.items() if k != "task"}
    return _FLAGS


# `name` and `name=value` in backquotes; name=value outside them ("pass e.g. rope=0.01")
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(=[^`]*)?`")
_ASSIGNED = re.compile(r"(?<![\w`.'\"-])([a-z_][a-z0-9_]*)=([^\s,;)`]+)")
# NumPy >= 2 scalar reprs: np.int64(1), np.float64(0.5), np.str_('x'), np.True_
_NUMPY = re.compile(r"np\.(?:[a-z]+\d*|str_|bytes_)\(([^()]*)\)")
_NUMPY_BOOL = re.compile(r"np\.(True|False)_")
_OPTIONS = re.compile(r"Options? (.+?) do(?:es)? not apply to method '(\w+)'; it takes: ([^.]*)\.")
_UNKNOWN = re.compile(r"^Unknown ([a-z_]+) ('[^']*')")
_COLUMNS = re.compile(r"(Columns? )(.+?)( not found\.)")


def _assignment(name: str, value: str, flags: dict[str, str]) -> str | None:
    flag = flags.get(name)
    if flag is None or flag == "FILE":
        return None
    value = value.strip("'\"")
    if value in ("True", ""):  # a switch, or "pass `dataset=` to pick one"
        return flag if value == "True" else f"{flag} NAME"
    if value == "None":  # no such column: `run=None`
        return f"{flag} ''"
    if flag == "--method":  # the command line spells the methods with hyphens
        value = value.replace("_", "-")
    return f"{flag} {value}"


def _quoted(flags: dict[str, str], match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    if value is not None:
        return _assignment(name, value[1:], flags) or match.group(0)
    return flags.get(name, match.group(0))


def _unquoted(flags: dict[str, str], match: re.Match[str]) -> str:
    value = match.group(2)
    end = "." if value.endswith(".") else ""  # the sentence's full stop, not the value's
    said = _assignment(match.group(1), value.removesuffix(".") if end else value, flags)
    return said + end if said else match.group(0)


def _unknown(match: re.Match[str]) -> str:
    """'Unknown method 'x'' -> '--method: unknown method 'x''."""
    flag = _FLAGS.get(match.group(1))
    if flag is None or flag == "FILE":
        return match.group(0)
    return f"{flag}: unknown {match.group(1).replace('_', ' ')} {match.group(2)}"


def _options(match: re.Match[str]) -> str:
    """'Option 'rho' does not apply to method 'sign'; it takes: prior, draws.' in flags."""
    given = [_FLAGS.get(o.strip(" '"), o.strip(" '")) for o in match.group(1).split(",")]
    takes = [_FLAGS[o.strip()] for o in match.group(3).split(",") if o.strip() in _FLAGS]
    method = match.group(2).replace("_", "-")
    verb = "does" if len(given) == 1 else "do"
    return (
        f"{', '.join(given)} {verb} not apply to --method {method}; it takes "
        + (", ".join(takes) if takes else "no further options")
        + "."
    )


def _column_flags(args: argparse.Namespace) -> dict[str, str]:
    """Column name -> the flag (or its default) that named it, for this subcommand."""
    named: dict[str, str] = {}
    if hasattr(args, "dataset_col"):  # repeatable; its default is "dataset"
        for c in args.dataset_col or ["dataset"]:
            named.setdefault(c, "--dataset-col")
    for dest, flag in (
        ("system_col", "--system-col"),
        ("run_col", "--run-col"),
        ("fold_col", "--fold-col"),
        ("gold", "--gold"),
        ("a", "--a"),
        ("b", "--b"),
    ):
        value = getattr(args, dest, None)
        if isinstance(value, str) and value:
            named.setdefault(value, flag)
    metrics = getattr(args, "metric", None)
    for m in [metrics] if isinstance(metrics, str) else metrics or []:
        named.setdefault(m, "--metric")
    for s in getattr(args, "systems", None) or []:
        named.setdefault(s, "--systems")
    return named


def _columns(message: str, args: argparse.Namespace) -> str:
    """Follow each missing column by the flag that named it: 'score' (--metric)."""
    named = _column_flags(args)

    def label(match: re.Match[str]) -> str:
        names = re.findall(r"'((?:[^'\\]|\\.)*)'", match.group(2))
        shown = [f"'{n}' ({named[n]})" if n in named else f"'{n}'" for n in names]
        return match.group(1) + ", ".join(shown) + match.group(3)

    out = _COLUMNS.sub(label, message, count=1)
    flags = sorted({named[n] for n in named if f"'{n}' (" in out}, key=out.index)
    if flags:
        out = out.replace(
            "name the right ones with the column arguments",
            "name the right ones with " + ", ".join(flags),
        )
    return out


def cli_message(message: str, args: argparse.Namespace) -> str:
    """Return `message` in the words of the subcommand `args.command`: flags, plain values."""
    command = getattr(args, "command", "")
    out = _NUMPY.sub(r"\1", message)
    out = _NUMPY_BOOL.sub(r"\1", out)
    out = _OPTIONS.sub(_options, out)
    if "not found. Available columns" in out:
        out = _columns(out, args)
    if command == "f1":
        out = out.replace(
            "; use `classes` for a multi-class one",
            "; a multi-class task is compared class by class (leave --positive out)",
        ).replace("name the prediction columns", "name the systems' columns with --a and --b")
    elif command == "rank":
        out = out.replace("name the prediction columns", "name the systems' columns with --systems")
    if command == "cv":  # cv keeps the systems --a and --b: an unknown one is one of them
        for dest in ("a", "b"):
            out = out.replace(
                f"`systems`: unknown system {getattr(args, dest, None)!r}",
                f"`system_{dest}`: unknown system {getattr(args, dest, None)!r}",
            )
    if command in ("cv", "rank"):  # `dataset` of read_scores is --dataset-col, not --dataset
        out = out.replace("`dataset=None`", "--dataset-col ''")
        out = out.replace(
            "(is a run or data set column missing?)",
            "(is a run or data set column missing? name it with --run-col or --dataset-col)",
        )
    out = out.replace("; or pass a function f(tp, fp, fn, tn)", "")
    out = _UNKNOWN.sub(_unknown, out, count=1)
    if out.startswith("--method: unknown method"):  # the CLI spells the methods with hyphens
        out = re.sub(r"'(\w+)'", lambda m: "'" + m.group(1).replace("_", "-") + "'", out)
    if command == "items":
        out = out.replace(
            "(common_items() keeps those every system has)",
            "(--common-items keeps those both have)",
        )
    if command == "items" or getattr(args, "items", False):  # no wide table's `systems` here
        out = out.replace(
            "`systems` and `run_suffix` are for wide tables", "`run_suffix` is for wide tables"
        )
    out = out.replace(" ....", " ...")  # a list cut short at the end of a sentence
    flags = _command_flags(args)
    out = _QUOTED.sub(partial(_quoted, flags), out)
    return _ASSIGNED.sub(partial(_unquoted, flags), out)


def stopped_message(args: argparse.Namespace, reason: str = "interrupted") -> str:
    """Say that a command stopped (`reason`), what it kept and how to go on from there.

    A ranking keeps each finished pair in its ``--cache-dir`` (and its fits, for one model
    of all the systems): run again, it resumes from them. Without one nothing is kept.
    """
    if getattr(args, "command", None) != "rank":
        return reason
    cache = getattr(args, "cache_dir", None)
    if cache is None:
        return (
            f"{reason}; nothing was kept (with --cache-dir DIR each finished pair is kept, "
            "and the same command run again resumes from them)"
        )
    return (
        f"{reason}; the pairs finished so far are kept in {cache}: run the same command "
        "again to resume from them"
    )
