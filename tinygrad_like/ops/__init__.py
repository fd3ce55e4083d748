"""Differentiable ops, one ``Function`` subclass each, grouped by kind."""
