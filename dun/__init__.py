"""dun: find the outstanding work in a repository and drive a coding agent until it is done."""

__version__ = "0.1.0"
