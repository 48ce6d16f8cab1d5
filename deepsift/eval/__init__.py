"""Evaluation: benchmark datasets, metrics, and the runner behind `deepsift eval`."""
