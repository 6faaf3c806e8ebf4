"""Recipes: Monque in a FastAPI, a Flask and a Django application (docs/application.md).

Each folder is a small application with its tests (run by ``make test``); they are examples
to copy from, not part of the installed package.
"""
