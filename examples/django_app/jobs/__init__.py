"""The Django app that enqueues jobs and runs them (``monque_worker``)."""
