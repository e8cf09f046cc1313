"""Command implementations: plain functions that return an exit code; the click layer only parses flags."""
