"""Seed streams: one `rng` argument becomes every seed a computation uses, reproducibly.

An analysis takes one ``rng`` (an int, a Generator or None), resolved once to an integer
seed that is recorded in its result (:func:`resolve_seed`). Everything random below it
draws from streams derived from that seed: the i-th child of a seed sequence
(:func:`child`), the seed of one pair of a ranking from the ranking's seed and the pair's
names (:func:`pair_seed`, so a pair's numbers do not depend on where or when it ran), and
the integer a sampler takes (:func:`sampler_seed`).
"""

from __future__ import annotations

import hashlib
import numbers
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["RNGLike", "child", "pair_seed", "resolve_seed", "sampler_seed"]

RNGLike = int | np.random.Generator | None


def resolve_seed(rng: Any) -> int:
    """Turn `rng` into the integer seed that reproduces the computation.

    An int is used as it is; a :class:`numpy.random.Generator` gives one draw from
    itself; None draws fresh entropy. Either way the returned seed is recorded in
    the result, so every result can be reproduced, including unseeded ones.
    """
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2**63 - 1))
    if rng is None:
        return int(np.random.SeedSequence().entropy % (2**63 - 1))  # type: ignore[operator]
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise InputError(f"`rng` must be a non-negative integer seed, got {rng!r}.")
        return int(rng)
    raise InputTypeError(
        "`rng` must be None, a non-negative int seed or a numpy.random.Generator, got "
        f"{type(rng).__name__}."
    )


def child(parent: np.random.SeedSequence, i: int) -> np.random.SeedSequence:
    """Return the i-th child of `parent` as ``parent.spawn`` makes it, whatever came before."""
    return np.random.SeedSequence(
        parent.entropy, spawn_key=(*parent.spawn_key, i), pool_size=parent.pool_size
    )


def pair_seed(seed: int, *identity: str) -> int:
    """Return the seed of one task: from the ranking's `seed` and the task's identity strings.

    Examples
    --------
    >>> pair_seed(1, "accuracy", "nbc", "aode") == pair_seed(1, "accuracy", "nbc", "aode")
    True
    >>> pair_seed(1, "accuracy", "nbc", "aode") != pair_seed(1, "accuracy", "nbc", "hnb")
    True
    """
    digest = hashlib.sha256("\x00".join(identity).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    ss = np.random.SeedSequence(seed, spawn_key=tuple(words))
    return int(ss.generate_state(1, np.uint64)[0] >> 1)


def sampler_seed(seed_seq: np.random.SeedSequence) -> int:
    """Return an integer seed for a sampler, generated from `seed_seq`."""
    return int(seed_seq.generate_state(1, np.uint32)[0])
