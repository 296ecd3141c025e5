"""What every plot shares: new axes, text wrapped to the axes, legends that hide nothing."""

from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["PRINT_DPI", "legend_outside", "new_axes", "sparse_x_ticks", "wrap_to_axes"]

#: dots per inch of the figures the plots make and save themselves: a 5-inch triangle is
#: 1250 pixels wide (1050 once its margins are cropped), sharp when printed at its size
PRINT_DPI = 250
#: average width of a character of the default font (DejaVu Sans), in ems
_CHAR_EM = 0.65


def new_axes(ax: Any, figsize: tuple[float, float]) -> Any:
    """Return `ax`, or the axes of a new figure of `figsize`.

    The new figure has the constrained layout, so that a legend beside the axes stays in it.
    """
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


#: room one x tick label takes, in ems of its font: ``−0.125`` is about 3.9, and a gap
_TICK_EMS = 5.0


def sparse_x_ticks(ax: Any, most: int = 5) -> None:
    """Put at most about `most` round ticks on the x axis of `ax`, fewer if it is narrow.

    So that labels such as ``−0.075`` never run into each other: the automatic
    locator may put 8 on a narrow axes, e.g. a forest beside long subtask names.
    The number is chosen each time the figure is drawn, from the axes' width then.
    """
    from matplotlib import rcParams
    from matplotlib.ticker import MaxNLocator

    class _RoomyLocator(MaxNLocator):
        def __call__(self) -> Any:
            width_pt = ax.bbox.width * 72.0 / ax.figure.dpi
            size = font_points(rcParams["xtick.labelsize"])
            room = int(width_pt // (_TICK_EMS * size))
            self.set_params(nbins=max(1, min(most, room)))
            return super().__call__()

    ax.xaxis.set_major_locator(_RoomyLocator(nbins=most, steps=[1, 2, 2.5, 5, 10]))


def font_points(size: Any) -> float:
    """Return a matplotlib font size (``"small"``, 9, ...) in points."""
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def wrap_to_axes(
    ax: Any, *lines: str, fontsize: Any = "medium", width_in: float | None = None
) -> str:
    """Join `lines`, each wrapped (never cut) to the width of `ax` at `fontsize`.

    `width_in` gives the width in inches instead (e.g. before the axes exist).
    """
    if width_in is None:
        width_in = ax.get_position().width * ax.figure.get_figwidth()
    chars = max(24, int(width_in * 72 / (_CHAR_EM * font_points(fontsize))))
    return "\n".join(textwrap.fill(line, chars, break_long_words=True) for line in lines)


def legend_outside(ax: Any, **kwargs: Any) -> Any:
    """Put the legend of `ax` to the right of its data area, where it hides no data.

    Inside the axes a legend sits on the ROPE's shading or on a curve wherever
    the data happen to fall; beside them it never does.
    """
    options = {"fontsize": "small", "frameon": False, **kwargs}
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **options)
