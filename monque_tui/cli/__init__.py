"""The ``monque-tui`` command line: flags and settings (``main``), the script commands, URL checks."""
