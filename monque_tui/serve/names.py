"""The names and defaults ``--serve`` documents (its environment variables, its session cap).

Apart from ``options`` so the command line can print them in ``--help`` and its errors
without importing the serve options' parsers and records on every start (issue 40: launch
to first rows; a console never serves).
"""

from __future__ import annotations

#: The token's environment variable; the token itself is never a flag (``ps`` shows argv).
TOKEN_ENV = "MONQUE_SERVE_TOKEN"
#: A file holding the token (first line), e.g. a systemd credential or a container secret.
TOKEN_FILE_ENV = "MONQUE_SERVE_TOKEN_FILE"
DEFAULT_MAX_SESSIONS = 4
#: How long a browser's login lasts (the cookie's Max-Age; the server forgets it then too).
SESSION_LIFETIME_ENV = "MONQUE_SERVE_SESSION_LIFETIME"
