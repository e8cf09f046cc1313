"""The posture's per-program readers (posture.py): what a table cannot say - which ansible modules and fleet commands
change their hosts, which flags switch this machine's system or publish, which calls reach a real device."""

from __future__ import annotations

import re
from collections.abc import Callable

from dun.guard.posture_tables import after as _after

_REMOTE_CMD_WRITE = re.compile(r"\b(?:stop|restart|reload|kill|pkill|killall|rm|reboot|shutdown|halt|poweroff|drop"
                               r"|delete|truncate|userdel|purge|remove|mv|dd|mkfs|chmod|chown|disable|mask|tee|sed"
                               r"|deploy|apply|upgrade|install)\b|>", re.I)
_ANSIBLE_READ = frozenset({"ping", "setup", "gather_facts", "debug", "stat", "ansible.builtin.ping",
                           "ansible.builtin.setup", "ansible.builtin.stat", "service_facts", "package_facts",
                           "ansible.builtin.debug", "slurp", "find", "fetch", "uri"})


def _fleet_local(words: list[str]) -> bool:
    inventories = _after(words, "-i") + _after(words, "--inventory")
    pattern = next((w for w in words[:1] if not w.startswith("-")), "")
    limits = _after(words, "-l") + _after(words, "--limit")
    return ("local" in _after(words, "-c") + _after(words, "--connection")) or (
        bool(limits) and all(x in ("localhost", "127.0.0.1") for x in limits)) or (
        bool(inventories) and all(i.rstrip(",") in ("localhost", "127.0.0.1") for i in inventories)) or \
        pattern in ("localhost", "127.0.0.1")


def _ansible(words: list[str]) -> str | None:
    modules = _after(words, "-m") + _after(words, "--module-name")
    command = " ".join(_after(words, "-a") + _after(words, "--args"))
    if _fleet_local(words):
        return None
    if modules and modules[-1] not in ("command", "shell", "raw", "ansible.builtin.command", "ansible.builtin.shell"):
        return None if modules[-1] in _ANSIBLE_READ else f"ansible module {modules[-1]} changes the hosts it targets"
    return f"ansible runs {command[:40]!r} on the hosts it targets" if _REMOTE_CMD_WRITE.search(command) else None


def _playbook(words: list[str]) -> str | None:
    return None if _fleet_local(words) else "ansible-playbook applies a playbook to the hosts of a non-local inventory"


def _fleet_command(name: str, start: int) -> Callable[[list[str]], str | None]:
    def judge(words: list[str]) -> str | None:
        lead = [w for w in words if not w.startswith("-")]
        command = " ".join(lead[start:start + 2])
        if lead[:2] in (["command", "run"],) or name == "knife":
            return f"{name} runs {command[:40]!r} on a fleet" if _REMOTE_CMD_WRITE.search(command) else None
        if lead[:2] in (["plan", "run"], ["task", "run"], ["script", "run"], ["apply"]) and not _fleet_local(words):
            return f"{name} {' '.join(lead[:2])} changes the hosts it targets"
        return None
    return judge


_PROD_HOST = re.compile(r"(?:^|[@.\-_])(?:prod|production|prd|live)(?:$|[.\-_:\d])", re.I)


def _ssh(words: list[str]) -> str | None:
    """A change run over ssh on a machine named for production (ssh deploy@web1.prod.acme.com 'git pull && ...')."""
    lead = [w for w in words if not w.startswith("-")]
    host = next((w for w in lead[:1] if _PROD_HOST.search(w.split("@", 1)[-1])), None)
    command = " ".join(lead[1:])
    return f"runs {command[:40]!r} on {host}, a production machine" if host and (
        _REMOTE_CMD_WRITE.search(command) or re.search(r"\bgit\s+(?:pull|checkout|reset|merge)\b", command)) else None


def _copy_to_prod(words: list[str]) -> str | None:
    """Files copied onto a machine named for production (rsync --delete dist/ deploy@web1.prod.acme.com:/var/www)."""
    dest = next((w for w in reversed(words) if not w.startswith("-")), "")
    host = dest.split(":", 1)[0] if ":" in dest and "://" not in dest else ""
    return f"copies files onto {host}, a production machine" if host and _PROD_HOST.search(host.split("@", 1)[-1]) \
        else None


# Programs that run things on other machines: judged by what they run
RUN_REMOTE: dict[str, Callable[[list[str]], str | None]] = {
    "ssh": _ssh, "rsync": _copy_to_prod, "scp": _copy_to_prod,
    "ansible": _ansible, "ansible-playbook": _playbook, "bolt": _fleet_command("bolt", 2),
    "knife": _fleet_command("knife", 2),
    "prefect": lambda w: "prefect runs a deployment on its server" if w[:2] == ["deployment", "run"] else None,
}


def _opens_container(words: list[str]) -> bool:
    """lxc config giving a container the host: privileged, raw settings, or a host directory outside /tmp as a disk."""
    disks = [w.split("=", 1)[1] for w in words if w.startswith("source=")]
    return words[:1] == ["config"] and (any(w.startswith(("security.", "raw.")) for w in words) or any(
        not d.startswith(("/tmp/", "/var/tmp/")) for d in disks))


def _host_switch(words: list[str]) -> bool:
    return bool({"switch", "boot", "test", "activate"}.intersection(words[:3]))


# Programs that change this machine's system or the user's profile outside the repository
HOST: dict[str, Callable[[list[str]], bool]] = {
    "nixos-rebuild": _host_switch, "darwin-rebuild": _host_switch, "home-manager": _host_switch,
    "nix-collect-garbage": lambda w: True, "nix-env": lambda w: True, "nix-channel": lambda w: True,
    "nix": lambda w: w[:2] in (["profile", "remove"], ["profile", "wipe-history"], ["store", "gc"],
                                ["store", "delete"]),
    "machinectl": lambda w: True, "microk8s": lambda w: True, "virsh": lambda w: True,
    "podman": lambda w: w[:1] == ["machine"] and bool({"rm", "reset", "remove"} & set(w[1:3])),
    "lxc": lambda w: _opens_container(w), "incus": lambda w: _opens_container(w),
}

_K3S = re.compile(r"^(?:k3s|k3s-agent|rke2|rke2-agent|microk8s)-(?:uninstall|killall)\.sh$")


def _electron(words: list[str]) -> str | None:
    values = _after(words, "-p") + _after(words, "--publish")
    return "electron-builder publishes the release" if values and values[-1] != "never" else None


def _nix_gc(words: list[str]) -> str | None:
    return "deletes the profile generations a rollback needs" if {"-d", "--delete-old"}.intersection(words) or any(
        w.startswith("--delete-older-than") for w in words) else None


def _nix_env(words: list[str]) -> str | None:
    return "removes packages or generations from the user's profile" if any(
        w in ("-e", "--uninstall", "--delete-generations") for w in words) else None


def _salt_key(words: list[str]) -> str | None:
    return "deletes or rejects minion keys on the salt master" if any(
        w in ("-d", "-D", "-r", "-R", "--delete", "--delete-all", "--reject", "--reject-all") for w in words) else None


# Programs that change state with no verb word: judged by their flags
WRITE_ALWAYS: dict[str, Callable[[list[str]], str | None]] = {
    "electron-builder": _electron, "nix-collect-garbage": _nix_gc, "nix-env": _nix_env, "salt-key": _salt_key,
    "nix-channel": lambda w: "removes a channel" if "--remove" in w else None,
    "deploy-rs": lambda w: "deploy-rs deploys a system to its hosts",
    "ansible-pull": lambda w: "ansible-pull applies a playbook fetched from a repository to this machine",
    "matrix-commander": lambda w: "matrix-commander sends a message to people" if {"-m", "--message"} & set(w) else
    None,
    "eas": lambda w: "eas submits the build to the store" if "--auto-submit" in w else None,
    "dvc": lambda w: "dvc gc removes data from the remote storage" if "gc" in w[:1] and (
        "-c" in w or "--cloud" in w) else None,
    "pyinfra": lambda w: None if any(x.startswith("@local") for x in w) or "--dry" in w else
    "pyinfra applies operations to the hosts of an inventory",
    "deploy": lambda w: "deploy-rs deploys a system to its hosts" if any("#" in x for x in w) else None,
    "fwupdmgr": lambda w: "flashes this machine's firmware" if w[:1] in (["update"], ["install"], ["upgrade"]) else
    None,
}
def _host_switch_why(words: list[str]) -> str | None:
    return "switches this machine's system or the user's profile to a new generation" if _host_switch(words) else None


_NOTEBOOKS = frozenset({"8888", "8889", "8890"})


def _exposed_notebook(words: list[str]) -> str | None:
    ips = _after(words, "--ip") + _after(words, "--NotebookApp.ip") + _after(words, "--ServerApp.ip")
    open_ip = any(ip in ("0.0.0.0", "*", "::") for ip in ips)
    no_token = any(re.match(r"--(?:NotebookApp|ServerApp|IdentityProvider)\.(?:token|password)=(?:''|\"\")?$", w)
                   for w in words)
    return "serves a notebook (it runs code) to the network without a token" if open_ip and no_token else None


def _tunnel(words: list[str]) -> str | None:
    ports = {m.group(1) for w in words if (m := re.search(r"(?:^|[:=])(\d{4,5})/?$", w))}
    return "publishes a notebook server (it runs code) on the internet" if ports & _NOTEBOOKS else None


def _dockerd(words: list[str]) -> str | None:
    hosts = _after(words, "-H") + _after(words, "--host")
    open_tcp = [h for h in hosts if h.startswith("tcp://") and not re.match(r"tcp://(?:127\.|localhost|\[::1\])", h)]
    return "serves the container engine's API to the network" if open_tcp and "--tlsverify" not in words else None


def _qemu_img(words: list[str]) -> str | None:
    if words[:1] not in (["create"], ["resize"], ["commit"], ["rebase"], ["amend"], ["convert"], ["snapshot"]):
        return None
    outside = [w for w in words[1:] if w.startswith("/") and not w.startswith(("/tmp/", "/var/tmp/"))]
    return f"rewrites a VM disk image outside the repository ({outside[0]})" if outside else None


MONITOR_AGENTS = re.compile(r"^(?:datadog-agent|dd-agent|newrelic-infra|nri-agent|telegraf|node_exporter"
                             r"|elastic-agent|filebeat|metricbeat|auditbeat|fluent-bit|fluentd|vector|otelcol\S*"
                             r"|grafana-agent|alloy|splunkd|falco|osqueryd|wazuh-agent|crowdstrike|falcon-sensor)$")


WRITE_ALWAYS |= {
    "nixos-rebuild": _host_switch_why, "darwin-rebuild": _host_switch_why, "home-manager": _host_switch_why,
    "jupyter": _exposed_notebook, "jupyter-notebook": _exposed_notebook, "jupyter-lab": _exposed_notebook,
    "ngrok": _tunnel, "cloudflared": _tunnel, "lt": _tunnel, "localtunnel": _tunnel, "bore": _tunnel,
    "dockerd": _dockerd, "qemu-img": _qemu_img,
    "journalctl": lambda w: "deletes this machine's logs" if any(x.startswith("--vacuum") for x in w) else None,
    "auditctl": lambda w: "turns off or empties this machine's audit rules" if "-D" in w or "-e 0" in " ".join(w)
    else None,
}
for _name in ("ldapadd", "ldapmodify", "ldapmodrdn", "ldappasswd", "ldapdelete"):
    WRITE_ALWAYS[_name] = lambda w: "changes a directory server others log in with" if not any(
        x.startswith(("ldapi://", "ldap://localhost", "ldap://127.", "ldaps://localhost")) for x in w) else None
for _name in ("k3s-uninstall.sh", "k3s-agent-uninstall.sh", "rke2-uninstall.sh", "k3s-killall.sh"):
    WRITE_ALWAYS[_name] = lambda w: "uninstalls the cluster on this machine with its data"

# Code a production console runs that changes data or sends (rails runner 'X.update_all(...)', a mailer's
# deliver_later, Stripe::Refund.create): a console's reads (`puts X.count`, pluck, inspect) stay free
_CONSOLE_WRITE = re.compile(r"\.(?:update|delete|destroy|insert|upsert|increment|decrement|toggle|save|create|touch"
                            r"|deliver|cancel|refund|perform|enqueue|send|charge|capture|void|transfer|payout)"
                            r"(?:_\w+)?!?(?:\b|\()|\bStripe::\w+\.\w+", re.I)
_PROD_APP = re.compile(r"(?:^|[-_.])(?:prod|production|live)(?:$|[-_.\d])", re.I)


def _heroku_console(words: list[str]) -> str | None:
    """heroku run CODE on a production app: what its code changes is production's data."""
    apps = [w.split("=", 1)[1] if "=" in w else words[i + 1] for i, w in enumerate(words[:-1])
            if w.split("=", 1)[0] in ("-a", "--app")]
    if words[:1] == ["run"] and any(_PROD_APP.search(a) for a in apps) and _CONSOLE_WRITE.search(" ".join(words)):
        return "heroku run changes production's data or sends from a console"
    return None


CONSOLE_REMOTE = {"heroku": _heroku_console}  # posture.fleet judges them before unwrap.py takes them apart

_EMULATOR_SERIAL = re.compile(r"^(?:emulator-\d+|localhost:\d+|127\.0\.0\.1:\d+)$")
_ADB_WRITE = re.compile(r"\b(?:pm (?:uninstall|clear|disable\S*|hide)|settings put|tcpip|uninstall|wipe|rm -r"
                        r"|reboot (?:bootloader|recovery)|am force-stop|dpm|svc \w+ disable)\b")


def _adb(words: list[str]) -> str | None:
    serials = _after(words, "-s")
    if "-e" in words or (serials and all(_EMULATOR_SERIAL.match(s) for s in serials)):
        return None
    command = " ".join(w for w in words if w not in ("-d", "-s", *serials))
    return "changes a real device over adb (not an emulator)" if _ADB_WRITE.search(command) else None


def _fastboot(words: list[str]) -> str | None:
    return "flashes, erases or unlocks a real device" if any(w in ("flash", "flashall", "erase", "format", "-w",
                                                                  "update", "flashing", "oem") for w in words) \
        else None


DEVICE: dict[str, Callable[[list[str]], str | None]] = {
    "adb": _adb, "fastboot": _fastboot,
    "ideviceinstaller": lambda w: "uninstalls an app from a real device" if {"-U", "--uninstall"} & set(w) else None,
    "xcrun": lambda w: "changes a real device (devicectl)" if w[:1] == ["devicectl"] and any(
        x in ("uninstall", "erase", "reboot", "install") for x in w) else None,
    "ios-deploy": lambda w: "changes a real device" if {"--uninstall_only", "--uninstall", "-9"} & set(w) else None,
    "cfgutil": lambda w: "erases or changes a real device" if {"erase", "restore", "remove-app"} & set(w) else None,
    "idevicediagnostics": lambda w: "restarts or shuts down a real device" if {"restart", "shutdown"} & set(w) else
    None,
}
