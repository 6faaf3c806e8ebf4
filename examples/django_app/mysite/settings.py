"""Settings of the Django recipe: the smallest project that serves a view and runs a command."""

import os

SECRET_KEY = "recipe-only-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
INSTALLED_APPS = ["examples.django_app.jobs"]  # where the monque_worker command lives
ROOT_URLCONF = "examples.django_app.mysite.urls"
DATABASES: dict[str, dict[str, str]] = {}  # the recipe needs none; a real project has its own
USE_TZ = True

#: The job store: one SQLite file beside the project, or a mongodb:// URL in production.
MONQUE_URL = os.environ.get("MONQUE_URL", "sqlite:///jobs.db")
