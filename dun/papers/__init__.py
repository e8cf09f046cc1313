"""The paper watch, a plugin that ships with dun: `dun papers poll` reads RSS/Atom feeds and JSON search APIs
into `.dun/papers.jsonl`, `dun papers list` and `read` show and settle them, `dun papers mission ID` turns one into
a deep-dive mission, and the `papers-unread` check lists the papers nobody has looked at yet.

It is registered like dun's own check types (dun/engine/manager.py names `dun.papers.plugin`) and uses only the
plugin hooks: `dun_commands`, `dun_check_types`, `dun_manifest_dirs`.
"""
