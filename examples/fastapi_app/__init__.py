"""FastAPI recipe: the lifespan opens one Monque; routes enqueue and wait (docs/application.md)."""
