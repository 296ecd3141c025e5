"""Scores of systems on data sets (per fold or per data set) and the models that read them."""
