"""Output formats for check results; each module is an ordinary dun plugin."""
