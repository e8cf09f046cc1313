"""Everything one command invocation needs: the repo, a fresh plugin manager, the config, the catalog."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pluggy

from dun.config.loader import Config, load_config
from dun.core.git import Repo, find_repo
from dun.engine.catalog import Catalog, load_catalog
from dun.engine.checkapi import CheckContext
from dun.engine.manager import make_manager, merged_mapping


@dataclass
class Session:
    repo: Repo
    pm: pluggy.PluginManager
    config: Config
    _catalog: Catalog | None = field(default=None, repr=False)
    _context: CheckContext | None = field(default=None, repr=False)

    @property
    def root(self) -> Path:
        return self.repo.root

    def context(self) -> CheckContext:
        """The one CheckContext of this invocation, shared by every check."""
        if self._context is None:
            self._context = CheckContext(self.root, self.repo.is_git, self.config)
        return self._context

    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.root, self.pm, self.config)
        return self._catalog


def open_session(path: Path | str | None = None) -> Session:
    repo = find_repo(path)
    pm = make_manager()
    config = load_config(repo.root, merged_mapping(pm, "dun_config_fields", "config section"))
    return Session(repo=repo, pm=pm, config=config)
