#!/usr/bin/env python
"""Django's command line for the recipe: ``python examples/django_app/manage.py monque_worker``."""

import os
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: examples.* imports
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "examples.django_app.mysite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
