"""The Textual console: the app, its screens and widgets, and the Textual-free session core."""
