"""Plots of isbetter results (matplotlib / seaborn).

Importing this package imports matplotlib; ``import isbetter`` does not. Every
plot takes ``ax=None`` (a new figure is made when it is None), returns the axes,
does no statistics beyond projecting points and never changes
``matplotlib.rcParams``.
"""
