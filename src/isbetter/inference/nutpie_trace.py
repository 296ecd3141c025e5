"""nutpie's raw trace as an :class:`arviz.InferenceData`: the posterior draws, lean.

nutpie hands back its chains as Arrow record batches and converts them with
:func:`arviz.from_dict`, tuning steps included (dropped afterwards when they are not
kept): for a model of 119 coordinates, 4 chains x 1500 steps, the conversion cost
0.6 s CPU against 0.43 s for the sampling itself (``bench/bench_items_rank.py``). Here
the draws after tuning go straight into one :class:`xarray.Dataset` per group
(``posterior`` and ``sample_stats``, the groups nutpie returns without ``save_warmup``),
with nutpie's names, dimensions and coordinates and the same values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from isbetter.inference import libs

__all__ = ["trace_to_idata"]


#: the columns of nutpie's statistics that it stores only when asked (``store_gradient``,
#: ``store_unconstrained``, ``store_mass_matrix``, ``store_divergences``; isbetter asks
#: for none), and its chain and draw numbers (the groups' coordinates)
SKIPPED = frozenset(
    {
        "gradient",
        "unconstrained_draw",
        "mass_matrix_inv",
        "mass_matrix_eigvals",
        "mass_matrix_stds",
        "divergence_start",
        "divergence_end",
        "divergence_momentum",
        "divergence_start_gradient",
        "chain",
        "draw",
    }
)


def _columns(
    batches: Sequence[Any], tuned: Sequence[int], coords: dict[str, Any]
) -> dict[str, tuple[tuple[str, ...], np.ndarray]] | None:
    """Return each column after tuning, ``(dims, values (chain, draw, ...))``.

    None when a column is not one of fixed shape without missing values in every chain.
    """
    import pyarrow

    out: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
    for name in batches[0].column_names:
        if name in SKIPPED:
            continue
        meta = batches[0].column(name).field.metadata or {}
        text = meta[b"shape"].decode() if b"shape" in meta else ""
        shape = tuple(int(s) for s in text.split(",")) if text else ()
        dims = tuple(meta[b"dims"].decode().split(",")) if b"dims" in meta else ()
        if len(dims) != len(shape):  # unnamed: ArviZ's default names
            dims = tuple(f"{name}_dim_{i}" for i in range(len(shape)))
        for dim, size in zip(dims, shape, strict=True):
            coords.setdefault(dim, np.arange(size))  # no coordinates: 0, 1, ... as ArviZ's
            if len(coords[dim]) != size:
                return None
        per_chain = []
        for batch, start in zip(batches, tuned, strict=True):
            col = pyarrow.array(batch.column(name)).slice(start)
            if col.null_count:
                return None
            if shape:
                col = col.flatten()
            per_chain.append(col.to_numpy(zero_copy_only=False).reshape(-1, *shape))
        if len({c.shape for c in per_chain}) != 1:
            return None
        out[name] = (("chain", "draw", *dims), np.stack(per_chain))
    return out


def trace_to_idata(results: Any, coords: Mapping[str, Any]) -> Any:
    """Return the draws after tuning of nutpie's raw `results` as an InferenceData.

    Parameters
    ----------
    results : nutpie's raw trace
        What ``nutpie.sample(..., return_raw_trace=True)`` returns (Arrow storage).
    coords : mapping
        The compiled model's coordinates (``compiled.coords``); a dimension without
        any is numbered 0, 1, ... (a variable's dimensions without names are named
        ``<name>_dim_<i>``), as ArviZ does.

    Returns
    -------
    arviz.InferenceData or None
        Groups ``posterior`` and ``sample_stats``; None for a trace not kept in Arrow
        (zarr storage: the caller converts it as nutpie does). Chains of unequal length
        or with missing values go through nutpie's own conversion.
    """
    import xarray as xr

    arviz = libs.arviz()

    if not results.is_arrow():
        return None
    draws, stats = results.get_arrow_trace()  # taken: nutpie cannot convert them again
    tuned = [int(np.asarray(s.column("tuning")).sum()) for s in stats]
    index = {name: np.asarray(values) for name, values in coords.items()}
    groups: dict[str, Any] = {}
    for group, batches in (("posterior", draws), ("sample_stats", stats)):
        columns = _columns(batches, tuned, index)
        if columns is None:  # missing values or ragged chains: nutpie's own conversion
            return libs.nutpie_arrow_to_arviz()(
                draws,
                stats,
                skip_vars=sorted(SKIPPED - {"chain", "draw"}),
                coords={k: pd.Index(v) for k, v in coords.items()},
                save_warmup=False,
            )
        n_chains, n_draws = len(batches), batches[0].num_rows - tuned[0]
        used = {d for dims, _ in columns.values() for d in dims[2:]}
        groups[group] = xr.Dataset(
            {name: (dims, values) for name, (dims, values) in columns.items()},
            coords={
                "chain": np.arange(n_chains),
                "draw": np.arange(n_draws),
                **{d: index[d] for d in sorted(used)},
            },
        )
    return arviz.InferenceData(posterior=groups["posterior"], sample_stats=groups["sample_stats"])
