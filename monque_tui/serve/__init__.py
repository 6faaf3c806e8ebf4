"""``monque-tui --serve``: the console in a browser, behind a token (ADR 0016).

Each browser session runs its own console process (textual-serve's model), so a session is
exactly the terminal console: every screen, key and live update. This package wraps
textual-serve's aiohttp app with what a page that can delete every job needs: a loopback
default, a token on every request and on the websocket, a session limit, and logs of who
connected from where.

``options`` (address, token, limits) imports no web stack, so the CLI can check flags and
fail with one line before it imports ``server`` (textual-serve, aiohttp: the ``serve`` extra).
"""
