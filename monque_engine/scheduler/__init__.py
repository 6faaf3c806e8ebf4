"""The scheduler: a facade (`Monque`) over small services with one job each."""

from .monque import Monque

__all__ = ["Monque"]
