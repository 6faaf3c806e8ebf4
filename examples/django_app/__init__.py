"""Django recipe: settings, a view that enqueues, a management command that runs the worker."""
