"""Generate the synthetic 20-class example ``predictions.csv`` (seeded, reproducible).

A 20-class single-label task of the size of the 20 Newsgroups test split used by
Zhang et al. (ICDM 2015) — 7 532 documents of 20 classes with unequal shares —
and the predictions of two fictitious classifiers that share document difficulty:

* class shares ~ Dirichlet(20 x 5) (seeded), so some classes are rarer than others;
* each document has a difficulty u ~ Uniform(0, 1);
* ``svm`` is right when u < 0.82;
* ``nb`` reuses u with probability 0.6 (else a fresh uniform) and is right when it is
  < 0.78, except on classes 15-19, where it is right when it is < 0.65;
* a wrong prediction is a neighbouring class (class +-1, +-2 mod 20) half of the time,
  any other class otherwise.

Run ``python data/f1_20class/make_f1_20class.py`` from the repository root; the seed is
fixed, so the output is identical on every machine with numpy >= 1.17.
"""

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20151114  # ICDM 2015
N = 7532
K = 20


def main() -> None:
    """Write ``predictions.csv`` next to this script."""
    rng = np.random.default_rng(SEED)
    shares = rng.dirichlet(np.full(K, 5.0))
    gold = rng.choice(K, size=N, p=shares)
    u = rng.random(N)

    def wrong_label() -> np.ndarray:
        near = (gold + rng.choice([-2, -1, 1, 2], N)) % K
        far = (gold + rng.integers(1, K, N)) % K
        return np.where(rng.random(N) < 0.5, near, far)

    def predict(share: float, acc: np.ndarray | float) -> np.ndarray:
        v = np.where(rng.random(N) < share, u, rng.random(N))
        return np.where(v < acc, gold, wrong_label())

    svm = predict(1.0, 0.82)
    nb = predict(0.6, np.where(gold >= 15, 0.65, 0.78))
    names = np.array([f"c{i:02d}" for i in range(K)])
    frame = pd.DataFrame(
        {"doc_id": np.arange(1, N + 1), "gold": names[gold], "svm": names[svm], "nb": names[nb]}
    )
    out = Path(__file__).with_name("predictions.csv")
    frame.to_csv(out, index=False)
    print(f"wrote {out} ({len(frame)} documents)")


if __name__ == "__main__":
    main()
