"""Built-in rules about remote state shared with others, judged by effect (remotestate.py raises their signals): a data
store's access or server settings changed, destructive raw HTTP to a server the task did not start, cloud security
opened, and a package's owners changed or a long-lived credential minted. Each denial carries the `why:` of its
signal. Data dumped out of a shared store and sent away is net.exfiltrate's (the dump flows like a secret)."""

from __future__ import annotations

from dun.guard.ruletypes import Match, Rule

_GEM_OWNER = ("-a", "--add", "-r", "--remove")

REMOTE_RULES: tuple[Rule, ...] = (
    Rule("db.admin", "changes the access or settings of a shared data store (one on localhost or a compose service "
         "is free)", (Match(signals=("db-admin",)),)),
    Rule("http.destroy", "destructive HTTP to a server this task did not start (localhost and compose services are "
         "free)", (Match(signals=("http-destroy",)),)),
    Rule("cloud.security", "opens cloud security; leave that to the operator", (Match(signals=("cloud-open",)),)),
    Rule("remote.write", "changes state on a server other than this machine with a tool no rule knows; run it "
         "against a local server, or leave it to the operator", (Match(signals=("remote-write",)),)),
    Rule("registry.owner", "changes who owns a package, or mints or stores a long-lived credential; leave that "
         "to the operator",
         (Match(signals=("registry-owner",)),
          Match(programs=("gem",), subcommands=("owner",), flags_any=_GEM_OWNER),
          Match(programs=("mix",), subcommands=("hex.owner",), actions=("add", "remove", "transfer")))),
)
