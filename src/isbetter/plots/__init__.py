"""Plots of isbetter results (matplotlib / seaborn).

Importing this package imports matplotlib; ``import isbetter`` does not. Every
plot takes ``ax=None`` (a new figure is made when it is None), returns the axes,
does no statistics beyond projecting points and never changes
``matplotlib.rcParams``.
"""

from isbetter.plots.cd import plot_cd_diagram
from isbetter.plots.f1 import (
    plot_f1_posterior,
    plot_f1_trace,
    plot_savage_dickey,
    save_f1_plot,
)
from isbetter.plots.hierarchical import (
    plot_difference_posterior,
    plot_next_posterior,
    plot_shrinkage,
    save_comparison_plot,
)
from isbetter.plots.items import plot_subtasks
from isbetter.plots.power import plot_power, save_power_plot
from isbetter.plots.ranking import (
    plot_hasse,
    plot_pairwise_heatmap,
    plot_triangle_grid,
    save_ranking_plot,
)
from isbetter.plots.ranks import plot_p_best, plot_rank_probabilities
from isbetter.plots.simplex import plot_simplex, project_simplex

__all__ = [
    "plot_cd_diagram",
    "plot_difference_posterior",
    "plot_f1_posterior",
    "plot_f1_trace",
    "plot_hasse",
    "plot_next_posterior",
    "plot_p_best",
    "plot_pairwise_heatmap",
    "plot_power",
    "plot_rank_probabilities",
    "plot_savage_dickey",
    "plot_shrinkage",
    "plot_simplex",
    "plot_subtasks",
    "plot_triangle_grid",
    "project_simplex",
    "save_comparison_plot",
    "save_f1_plot",
    "save_power_plot",
    "save_ranking_plot",
]
