"""Simulation-based checks of isbetter's models (calibration, coverage, decision error rates).

Run the scripts from the repository root: ``python validation/sbc.py --out DIR`` and
``python validation/coverage.py --out DIR`` (see ``validation/README.md``).
"""
