r"""Log densities written for nutpie: the C interface, and the scalar helpers they share.

nutpie samples a PyMC model by compiling its PyTensor graph with numba, which costs
seconds to minutes in every new process and again for every shape. isbetter's models
instead write their log density and its gradient as plain Python over one float64
buffer of data of any shape, compiled by numba into C functions and kept in isbetter's
on-disk cache (:mod:`isbetter.core.cache`): the hierarchical model
(:mod:`isbetter.cv.hierarchical.compiled_backend`), the joint model
(:mod:`isbetter.cv.joint.compiled_backend`) and the items' hierarchical model
(:mod:`isbetter.items.hierarchical.density`). This module holds what they share:
:func:`nutpie_cfuncs` compiles a density's two callbacks, :func:`nutpie_model` wraps
them as nutpie's compiled model, and :func:`softplus`, :func:`sigmoid`,
:func:`digamma` and :func:`status` are the scalar functions their kernels call
(registered with numba by each density's build, so a module that inlines them lists
this one in its ``CACHE_DEPENDS``).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from isbetter.core.errors import IsbetterError
from isbetter.inference import libs

__all__ = [
    "NUTPIE_FIELDS",
    "check_nutpie_fields",
    "digamma",
    "nutpie_cfuncs",
    "nutpie_model",
    "sigmoid",
    "softplus",
    "status",
]


# Plain Python, compiled by numba where a density's kernels call them.
def softplus(v: float) -> float:  # pragma: no cover - compiled by numba
    """``log(1 + exp(v))`` without overflow."""
    return max(v, 0.0) + math.log1p(math.exp(-abs(v)))


def sigmoid(v: float) -> float:  # pragma: no cover - compiled by numba
    """``1 / (1 + exp(-v))`` without overflow."""
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


def digamma(v: float) -> float:  # pragma: no cover - compiled by numba
    """Return the digamma function of ``v > 0`` (numba has none)."""
    # v > 0: the recurrence psi(v) = psi(v + 1) - 1 / v up to v >= 10, then the asymptotic
    # series (Abramowitz & Stegun 6.3.18) to v^-10: the first omitted term is < 3e-14 there
    out = 0.0
    while v < 10.0:
        out -= 1.0 / v
        v += 1.0
    f = 1.0 / (v * v)
    series = f * (1/12 - f * (1/120 - f * (1/252 - f * (1/240 - f * (1/132)))))  # fmt: skip
    return out + math.log(v) - 0.5 / v - series


def status(logp: float, grad: np.ndarray) -> int:  # pragma: no cover - compiled by numba
    """Return nutpie's status code of a log density and its gradient (0: both finite)."""
    # the C functions' return code, as nutpie's own: 3 a non-finite gradient, 4 a log density
    for k in range(grad.shape[0]):
        if not math.isfinite(grad[k]):
            return 3
    return 0 if math.isfinite(logp) else 4


def nutpie_cfuncs(logp: Any, expand: Any, on_disk: bool) -> tuple[Any, Any]:
    """Compile `logp` and `expand` as the C callbacks nutpie calls (cached on disk if `on_disk`).

    ``logp(dim, x, grad, logp, user_data)`` writes the log density and its gradient;
    ``expand(dim, expanded_dim, x, out, user_data)`` the draw's stored values. Both
    return 0, or a nonzero status that nutpie reports as a divergence.
    """
    c = numba.types
    logp_sig = c.int64(
        c.uint64, c.CPointer(c.double), c.CPointer(c.double), c.CPointer(c.double), c.voidptr
    )
    expand_sig = c.int64(c.uint64, c.uint64, c.CPointer(c.double), c.CPointer(c.double), c.voidptr)
    return (
        numba.cfunc(logp_sig, cache=on_disk, error_model="numpy")(logp),
        numba.cfunc(expand_sig, cache=on_disk, error_model="numpy")(expand),
    )


#: the fields of nutpie's CompiledPyMCModel that nutpie_model fills; _n_dim, _shapes and _coords
#: are private to nutpie (known to work with nutpie 0.16, which pyproject.toml pins)
NUTPIE_FIELDS = (
    "dims",
    "compiled_logp_func",
    "compiled_expand_func",
    "initial_point_func",
    "shared_data",
    "user_data",
    "n_expanded",
    "shape_info",
    "logp_func",
    "expand_func",
    "_n_dim",
    "_shapes",
    "_coords",
)


def check_nutpie_fields(cls: type) -> None:
    """Raise a clear error if nutpie's compiled-model class lacks a field the density fills."""
    import dataclasses
    from importlib.metadata import version

    have = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    missing = [name for name in NUTPIE_FIELDS if name not in have]
    if missing:
        raise IsbetterError(
            f"nutpie {version('nutpie')} changed its CompiledPyMCModel: field(s) "
            f"{', '.join(missing)} are gone, which isbetter's compiled densities fill."
            " isbetter is known to work with nutpie 0.16: pip install 'nutpie>=0.16,<0.17' "
            "(or pass backend='pymc')."
        )


def nutpie_model(
    functions: tuple[Any, Any],
    buffer: np.ndarray,
    n_dim: int,
    layout: tuple[list[str], list[tuple[int, ...]], dict[str, Any], dict[str, tuple[str, ...]]],
    initial_point: Any,
) -> Any:
    """Return nutpie's compiled model around a density's C functions and data buffer.

    `functions` are the log density's and the expansion's C functions (nutpie's
    interface, as :func:`nutpie_cfuncs` describes), `buffer` their data, `n_dim` the
    number of unconstrained parameters; `layout` the stored variables' names, shapes,
    coordinates and dimensions; ``initial_point(seed)`` the sampler's start.
    """
    CompiledPyMCModel = libs.nutpie().compile_pymc.CompiledPyMCModel

    check_nutpie_fields(CompiledPyMCModel)
    names, shapes, coords, dims = layout
    buffer.flags.writeable = False
    sizes = [int(np.prod(shape)) for shape in shapes]
    offsets = np.cumsum([0, *sizes])
    slices = [slice(int(lo), int(hi)) for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)]
    return CompiledPyMCModel(
        dims=dims,
        compiled_logp_func=functions[0],
        compiled_expand_func=functions[1],
        initial_point_func=initial_point,
        shared_data={},
        user_data=buffer,
        n_expanded=int(offsets[-1]),
        shape_info=(names, slices, shapes),
        logp_func=None,
        expand_func=None,
        _n_dim=n_dim,
        _shapes=dict(zip(names, shapes, strict=True)),
        _coords=coords,
    )
