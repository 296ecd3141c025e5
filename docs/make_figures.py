"""Generate the README's pictures into ``docs/img/`` from the shipped data, with fixed seeds.

Five pictures, each made with the public API exactly as the README's tour calls it:

* ``triangle.png`` — nbc vs aode on the 54 UCI data sets (hierarchical model,
  ROPE 0.01, seed 1): ``isbetter.compare`` + ``isbetter.plots.plot_simplex``;
* ``hasse.png`` — the partial order of the five UCI classifiers
  (``isbetter.rank(table, rope=0.01, rng=1)`` + ``isbetter.plots.plot_hasse``);
* ``cd.png`` — the critical-difference diagram of the same five classifiers' mean
  ranks (``isbetter.friedman_nemenyi(table)`` + ``isbetter.plots.plot_cd_diagram``:
  the ranking's ``baselines["accuracy"]`` without its pairwise fits, in a second);
* ``f1_posterior.png`` — the posterior of the F1 difference of svm vs nb on
  class "sport" of ``data/f1_example`` (``isbetter.compare_f1`` +
  ``isbetter.plots.plot_f1_posterior``): the class whose 95% HDI straddles the
  ROPE's edge, so the picture shows what the ROPE decides;
* ``tagger_triangles.png`` — the four EWT taggers' pairs on token accuracy
  (``data/ud_ewt_taggers``, hierarchical model of the README's three-metric ranking, ROPE
  0.002 on tokens, seed 1): ``isbetter.rank`` + ``isbetter.plots.plot_triangle_grid``,
  Szymański & Gorman's Figure 1.

Every figure has a fixed size in inches and is saved at :data:`DPI` (:data:`DPIS`) without
``bbox_inches="tight"``, so its size in pixels is fixed too (``SIZES``;
``tests/plots/test_docs_figures.py`` checks it). The PNGs carry no software-version
metadata, so regenerating them with the same libraries rewrites the same bytes.

The hierarchical fits load the compiled model from isbetter's on-disk cache
(the first run on a machine compiles it, ~60 s); the ranking fits 10 pairs
(~20-60 s on 2 cores).

Run from the repository root: ``python docs/make_figures.py [--out DIR] [--jobs N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
F1_EXAMPLE = ROOT / "data" / "f1_example" / "predictions.csv"
EWT = ROOT / "data" / "ud_ewt_taggers" / "scores.csv"
TAGGERS = ("mft", "tnt", "perceptron", "crf")
OUT = ROOT / "docs" / "img"

SEED = 1
ROPE = 0.01
DPI = 100
#: figures saved sharper than DPI: the triangle, readable at print size (1000 px across)
DPIS = {"triangle.png": 200}
F1_CLASS = "sport"  # the row of the F1 comparison that f1_posterior.png shows
# figure sizes in inches; at DPI they give the pixel sizes the test checks
SIZES: dict[str, tuple[float, float]] = {
    "triangle.png": (5.0, 4.6),
    "hasse.png": (7.5, 4.4),  # wide enough for the inconsistencies listed below it
    "cd.png": (7.5, 2.5),  # plots.cd.cd_size of five systems and two groups
    "f1_posterior.png": (6.4, 4.0),
    "tagger_triangles.png": (6.0, 6.7),  # plot_triangle_grid's own size for four systems
}
# no "Software: matplotlib x.y" entry: the bytes do not change with the version
_METADATA: dict[str, Any] = {"Software": None}


def _save(fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=DPIS.get(path.name, DPI), metadata=_METADATA)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    return path


def _figure(name: str) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZES[name], layout="constrained")
    return fig, fig.add_subplot()


def _uci_table() -> Any:
    import isbetter

    return isbetter.read_scores(UCI, dataset="dataset_id", system="classifier", score="accuracy")


def make_triangle(out: Path, jobs: int | None) -> Path:
    """Triangle of nbc vs aode: hierarchical model on 54 UCI data sets (Corani et al. 2017)."""
    import isbetter
    from isbetter.plots import plot_simplex

    res = isbetter.compare(_uci_table(), "nbc", "aode", rope=ROPE, rng=SEED)
    print(
        f"nbc vs aode: P(nbc better) {res.p_a_better:.4f}, P(rope) {res.p_rope:.4f}, "
        f"P(aode better) {res.p_b_better:.4f}"
    )
    fig, ax = _figure("triangle.png")
    plot_simplex(res, ax=ax)
    return _save(fig, out / "triangle.png")


def make_hasse(out: Path, jobs: int | None) -> Path:
    """Hasse diagram of the five UCI classifiers (Szymański & Gorman 2020)."""
    import isbetter
    from isbetter.plots import plot_hasse

    ranking = isbetter.rank(_uci_table(), rope=ROPE, jobs=jobs, rng=SEED)
    print(f"order: {ranking.order('accuracy')}")
    fig, ax = _figure("hasse.png")
    plot_hasse(ranking, ax=ax)
    return _save(fig, out / "hasse.png")


def make_cd(out: Path, jobs: int | None) -> Path:
    """Critical-difference diagram of the five UCI classifiers' mean ranks (Demšar 2006)."""
    import isbetter
    from isbetter.plots import plot_cd_diagram

    baselines = isbetter.friedman_nemenyi(_uci_table())
    ranks = ", ".join(f"{s} {baselines.mean_ranks[s]:.3f}" for s in baselines.by_rank)
    cd = baselines.critical_difference(0.05)
    print(f"mean ranks: {ranks}; CD {cd.cd:.3f}, groups {cd.groups}")
    fig, ax = _figure("cd.png")
    plot_cd_diagram(baselines, ax=ax)
    return _save(fig, out / "cd.png")


def make_f1_posterior(out: Path, jobs: int | None) -> Path:
    """F1 of svm vs nb on class "sport" of one test set of 2 000 documents (Zhang et al. 2016)."""
    import isbetter
    from isbetter.plots import plot_f1_posterior

    res = isbetter.compare_f1(F1_EXAMPLE, system_a="svm", system_b="nb", rng=SEED)
    row = res.row(F1_CLASS)
    print(
        f"F1 on {F1_CLASS}, svm - nb: mean {row['mean']:+.4f}, "
        f"HDI [{row['interval_low']:+.4f}, {row['interval_high']:+.4f}], "
        f"P(rope) {row['p_rope']:.4f}, decision {row['decision']}"
    )
    fig, ax = _figure("f1_posterior.png")
    plot_f1_posterior(res, F1_CLASS, ax=ax)
    return _save(fig, out / "f1_posterior.png")


def make_tagger_triangles(out: Path, jobs: int | None) -> Path:
    """Triangles of every pair of the four EWT taggers on token accuracy (5 genres x 30 folds).

    The ranking fits all 18 pairs and metrics (~100 s on 2 busy cores), as the README does.
    """
    from matplotlib.figure import Figure

    import isbetter
    from isbetter.plots import plot_triangle_grid

    # the README's ranking (three metrics, the paper's ROPEs, seed 1): the same fits, so the
    # picture shows the probabilities of the README's likelihood table
    rope = {"token_accuracy": 0.002, "sentence_accuracy": 0.02, "oov_accuracy": 0.02}
    table = isbetter.read_scores(EWT, score=list(rope))
    ranking = isbetter.rank(table, rope=rope, jobs=jobs, rng=SEED)  # systems: sorted, as there
    print(f"token_accuracy chain: {ranking.chain('token_accuracy')}")
    fig = Figure(figsize=SIZES["tagger_triangles.png"])
    plot_triangle_grid(ranking, "token_accuracy", systems=TAGGERS, fig=fig)
    return _save(fig, out / "tagger_triangles.png")


MAKERS: dict[str, Callable[[Path, int | None], Path]] = {
    "triangle.png": make_triangle,
    "hasse.png": make_hasse,
    "cd.png": make_cd,
    "f1_posterior.png": make_f1_posterior,
    "tagger_triangles.png": make_tagger_triangles,
}


def main(argv: list[str] | None = None) -> int:
    """Write the README pictures; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=OUT, help="output directory (default: docs/img)"
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes for the ranking (default: 1)"
    )
    parser.add_argument(
        "--only", choices=sorted(MAKERS), action="append", help="make only this picture"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or MAKERS:
        start = time.perf_counter()
        MAKERS[name](args.out, args.jobs)
        print(f"  {name}: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main())
