"""The core both kinds of evidence share: posteriors, their summaries, decisions, sampling."""
