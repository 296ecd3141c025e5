"""Corani et al.'s hierarchical correlated-t model: spec, backends, the model."""
