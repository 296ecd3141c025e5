"""Checks shared by the plot tests."""


def legend_hides_nothing(ax):
    """The legend lies outside the data area (where the ROPE is shaded) and inside the figure."""
    fig = ax.figure
    fig.canvas.draw()
    box, data, page = ax.get_legend().get_window_extent(), ax.get_window_extent(), fig.bbox
    overlaps = box.x0 < data.x1 and box.x1 > data.x0 and box.y0 < data.y1 and box.y1 > data.y0
    inside = box.x0 >= page.x0 and box.x1 <= page.x1 and box.y0 >= page.y0 and box.y1 <= page.y1
    return not overlaps and inside


def x_tick_overlaps(ax):
    """Return the pairs of neighbouring x tick labels that run into each other, as drawn."""
    ax.figure.canvas.draw()
    low, high = sorted(ax.get_xlim())
    shown = [
        t for t, x in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
        if t.get_text() and low <= x <= high
    ]  # fmt: skip
    boxes = sorted((t.get_window_extent() for t in shown), key=lambda b: b.x0)
    return [(a, b) for a, b in zip(boxes, boxes[1:], strict=False) if a.x1 > b.x0 - 2]
