"""hweval: recurring AI-hardware evaluation, ranked by the cost of the outcome."""

__version__ = "0.1.0"
