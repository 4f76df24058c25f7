"""Trace-driven cache/coherence simulator and the fitting of model parameters (planned)."""
