"""The statistical models of isbetter, one module per model.

Nothing here imports PyMC at import time; the PyMC models import it inside the
functions that build and sample them.
"""
