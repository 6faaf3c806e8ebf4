"""What every part of ``monque-tui`` shares: exit codes and the guarded standard streams."""
