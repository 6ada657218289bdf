"""Conflict detection: deterministic rules, the trained classifier, and the pipeline that runs them."""
