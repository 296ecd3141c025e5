"""The ground floor: errors, validators, table reading, provenance, progress, the cache."""
