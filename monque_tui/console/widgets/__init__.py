"""One widget per module."""
