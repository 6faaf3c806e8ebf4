"""What every part of ``monque-tui`` shares: exit codes, the guarded standard streams, the listen-address reading."""
