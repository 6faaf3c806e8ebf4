"""The engine's version, the one copy (setuptools reads it statically; see pyproject.toml).

A module of its own, below everything: the scheduler writes it on each instance's record,
and importing it from the package's ``__init__`` made the package and the scheduler import
each other (an import circle, issue 35).
"""

__version__ = "0.1.0"
