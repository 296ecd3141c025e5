"""Generate the synthetic per-document example ``predictions.csv`` (seeded, reproducible).

No real per-document predictions of the SIGIR 2016 systems are public, so this file is
synthetic. 2 000 documents of four topics (``sport``, ``politics``, ``tech``,
``science``; shares 0.3, 0.3, 0.2, 0.2) and the predictions of three fictitious
classifiers that share document difficulty, as real classifiers trained on the same
data do:

* each document has a difficulty u ~ Uniform(0, 1);
* ``svm`` is right when u < 0.86;
* ``logreg`` reuses the document's u with probability 0.8 (else a fresh uniform) and
  is right when it is < 0.85: almost the same as ``svm`` (the paper's SVM_L1 vs SVM_L2);
* ``nb`` reuses u with probability 0.5 and is right when it is < 0.78, except on
  ``science``, where it is right when it is < 0.62 (a class-specific weakness);
* a wrong prediction is another topic, chosen uniformly, except that ``tech`` and
  ``science`` are confused with each other half of the time.

Run ``python data/f1_example/make_f1_example.py`` from the repository root; the seed is
fixed, so the output is identical on every machine with numpy >= 1.17.
"""

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20160717  # first day of SIGIR 2016
N = 2000
TOPICS = np.array(["sport", "politics", "tech", "science"])


def main() -> None:
    """Write ``predictions.csv`` next to this script."""
    rng = np.random.default_rng(SEED)
    gold = rng.choice(4, size=N, p=[0.3, 0.3, 0.2, 0.2])
    u = rng.random(N)

    def wrong_label() -> np.ndarray:
        other = (gold + rng.integers(1, 4, N)) % 4
        confuse = (gold >= 2) & (rng.random(N) < 0.5)
        return np.where(confuse, 5 - gold, other)  # tech (2) <-> science (3)

    def predict(share: float, acc: np.ndarray | float) -> np.ndarray:
        v = np.where(rng.random(N) < share, u, rng.random(N))
        return np.where(v < acc, gold, wrong_label())

    svm = predict(1.0, 0.86)
    logreg = predict(0.8, 0.85)
    nb = predict(0.5, np.where(gold == 3, 0.62, 0.78))
    frame = pd.DataFrame(
        {
            "doc_id": np.arange(1, N + 1),
            "gold": TOPICS[gold],
            "svm": TOPICS[svm],
            "logreg": TOPICS[logreg],
            "nb": TOPICS[nb],
        }
    )
    out = Path(__file__).with_name("predictions.csv")
    frame.to_csv(out, index=False)
    print(f"wrote {out} ({len(frame)} documents)")


if __name__ == "__main__":
    main()
