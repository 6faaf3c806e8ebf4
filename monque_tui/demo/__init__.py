"""The living demo queue (``--demo``), the seeded store, and the screenshot scenes built on it."""
