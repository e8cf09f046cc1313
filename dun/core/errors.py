"""Exceptions that map to documented exit codes; the CLI's one error handler turns them into one line."""

from __future__ import annotations

import errno

from dun.core.kinds import ExitCode

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(exc: BaseException) -> bool:
    """No space (or quota) left for a write: the loop stops with `disk_full` instead of crashing."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL


class DunError(Exception):
    """An error the user can act on: printed as one line, never with a traceback."""

    exit_code = ExitCode.USAGE


class UsageError(DunError):
    """Bad command-line input."""


class UnsafePathError(DunError):
    """A link (or a path leading out of the repository) where dun was about to write, restore or delete: dun never
    follows one, since an agent could have planted it to aim dun's write outside."""


class ConfigError(DunError):
    """A config file or plugin manifest is invalid. `errors` holds one line per problem."""

    def __init__(self, errors: list[str] | str) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__(self.errors[0] if self.errors else "invalid configuration")
