"""Flask recipe: views enqueue with the sync client (docs/application.md)."""
