"""End-to-end tests: the real Claude Code CLI against the scripted model server (a package, so that its
conftest does not shadow tests/conftest.py as the module `conftest`)."""
