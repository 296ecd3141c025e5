"""The joint correlated model: all K systems' fold-level scores in one hierarchical model.

:func:`~isbetter.cv.joint.model.joint_fit` fits it: :mod:`.spec` prepares the data
and holds the priors, :mod:`.likelihood` is the likelihood from sufficient
statistics, :mod:`.pymc_backend` the PyMC model and :mod:`.compiled_backend` the
same density compiled for nutpie (once per machine, cached). :func:`isbetter.rank`
with ``method="joint"`` reads the pairwise table and the ranks off its one posterior.
"""
