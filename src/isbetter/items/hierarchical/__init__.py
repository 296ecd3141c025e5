"""Many subtasks: the hierarchical paired model of binary items (DESIGN §4.3)."""
