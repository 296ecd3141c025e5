"""Per-document predictions on one test set and the models that read them."""
