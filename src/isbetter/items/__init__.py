"""Language-model evaluations item by item: readers, paired models, pooling over subtasks.

Evaluation harnesses log one record per test item and model (lm-evaluation-harness's
``--log_samples`` output, Inspect logs, plain item x model tables). This wing reads them
into one item-level table, compares two models on the same items with exact paired
models, pools the comparison over subtasks hierarchically, and hands many models to
:func:`isbetter.rank` (``../shared/DESIGN.md`` §4.3).
"""

from isbetter.items.reader import read
from isbetter.items.table import ItemTable, PairedItems

__all__ = ["ItemTable", "PairedItems", "read"]
