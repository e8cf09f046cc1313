"""Commands that run on another machine, container or VM through a hosting, cloud or fleet tool (heroku run, fly ssh
console -C, gcloud compute ssh --command, az vm run-command, aws ssm send-command, ansible, salt, pdsh, vagrant ssh,
lxc exec, oc rsh, ...): the walker analyses them as remote commands, which meet every rule (fs.delete-remote for
their deletes)."""

from __future__ import annotations

import re
import shlex

from dun.guard.expand import Val

_CLOUD_OPTIONS = {"heroku": ("-a", "--app", "-r", "--remote", "-s", "--size", "-e", "--env"),
                  "fly": ("-a", "--app", "-s", "--select"), "flyctl": ("-a", "--app", "-s", "--select")}


def cloud_remote(prog: str, rest: list[Val]) -> list[str] | None:
    """Commands that run on a machine of a hosting or cloud service: `heroku run CMD`, `fly ssh console -C CMD`,
    `gcloud compute ssh HOST --command CMD`, `az vm run-command invoke --scripts CMD`, `aws ssm send-command
    --parameters commands=CMD`; None for other calls."""
    words = [v.text for v in rest]
    if prog == "heroku" and words[:1] == ["run"]:
        skip = _CLOUD_OPTIONS["heroku"]
        kept = [w for i, w in enumerate(words[1:], 1) if w not in skip and words[i - 1] not in skip
                and not w.startswith(tuple(f"{s}=" for s in skip if s.startswith("--")))]
        # The CLI joins its words into one line for the dyno's shell, quoting a word holding a space or a double
        # quote in double quotes (`heroku run rails runner 'puts X.new("a").size'`); a single word is a line as is
        return [" ".join(w if len(kept) == 1 or not {" ", '"'} & set(w) else '"' + w.replace('"', '\\"') + '"'
                         for w in kept)] if kept else []
    if prog in ("fly", "flyctl") and words[:2] == ["ssh", "console"]:
        return _option_values(words, ("-C", "--command"))
    if prog == "gcloud" and words[:2] == ["compute", "ssh"]:
        return _option_values(words, ("--command",)) + ([" ".join(words[words.index("--") + 1:])] if "--" in words
                                                       else [])
    if prog == "az" and words[:3] == ["vm", "run-command", "invoke"]:
        return _option_values(words, ("--scripts",))
    if prog == "aws" and words[:2] == ["ssm", "send-command"]:
        return [re.sub(r"^commands=\[?|\]$", "", v).strip("'\"") for v in _option_values(words, ("--parameters",))]
    return _fleet_remote(prog, words)


def _fleet_remote(prog: str, words: list[str]) -> list[str] | None:
    """Tools that run a command on other machines, containers or VMs: ansible -m shell -a CMD, salt T cmd.run CMD,
    pssh/pdsh/clush ... CMD, vagrant ssh -c CMD, multipass/lxc/incus exec X -- CMD, oc rsh POD CMD, nomad alloc exec
    ID CMD."""
    if prog in ("ansible", "ansible-console"):
        module = _option_values(words, ("-m", "--module-name"))
        shell = not module or module[-1].rsplit(".", 1)[-1] in ("shell", "command", "raw")
        return _option_values(words, ("-a", "--args")) if shell else []
    if prog in ("salt", "salt-ssh") and "cmd.run" in words[:-1]:
        return [words[words.index("cmd.run") + 1]]
    if prog in ("pssh", "parallel-ssh", "pdsh", "clush", "mussh") and words and not words[-1].startswith("-"):
        return [words[-1]]
    if prog == "vagrant" and words[:1] == ["ssh"]:
        return _option_values(words, ("-c", "--command")) + ([" ".join(words[words.index("--") + 1:])]
                                                            if "--" in words else [])
    if prog in ("multipass", "lxc", "incus", "limactl") and words[:1] in (["exec"], ["shell"]) and "--" in words:
        return [shlex.join(words[words.index("--") + 1:])]  # an argv, not a line: its words keep their bounds
    if prog == "oc" and words[:1] == ["rsh"] and len(words) > 2:
        return [shlex.join(w for w in words[2:] if w != "--")]
    if prog == "nomad" and words[:2] == ["alloc", "exec"] and len(words) > 3:
        return [shlex.join(words[3:])]
    return None


def _option_values(words: list[str], names: tuple[str, ...]) -> list[str]:
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in names] + [
        w.split("=", 1)[1] for w in words if w.startswith(tuple(f"{n}=" for n in names if n.startswith("--")))]
