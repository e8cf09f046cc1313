"""Cloud security opened, judged by verb and effect across CLIs (aws, gcloud, az, doctl, oci, hcloud, and CLIs no rule
names): ingress from 0.0.0.0/0 or ::/0 to an admin port or every port, public ACLs, policies and blob access, audit
logging, MFA, versioning, deletion protection or a security service turned off, an administrator role given, a key's
deletion scheduled. Read verbs (describe, list, get, plan) and filters that only name 0.0.0.0/0 stay free, and so do
web ports opened to everyone."""

from __future__ import annotations

import itertools
import re

from dun.guard.effects import Facts
from dun.guard.rules_generic import PACKAGE_TOOLS, TEXT_AND_OWN

_OPEN_CIDR = re.compile(r"(?:^|[^\d.])(?:0\.0\.0\.0/0|::/0)(?:$|[^\d])"
                        r"|^--source-address-prefix(?:es)?=(?:\*|internet|any)$", re.I)
_ADMIN_PORT = re.compile(r"(?:^|[^\d.])(?:22|23|135|139|445|1433|1521|2375|2376|2379|3306|3389|5432|5601|5900|5984"
                         r"|6379|6443|8500|9042|9200|9300|10250|11211|15672|27017)(?:$|[^\d.])")
_ALL_PORTS = re.compile(r"^(?:-1|all|0-65535|1-65535|\*|tcp:0-65535|tcp:1-65535|all-traffic|-p=-1|--protocol=(?:all|-1)"
                        r"|ports:all|fromport=0|ipprotocol=-?1|--port-range=\*|--dest(?:ination)?-port-ranges?=\*)$",
                        re.I)
_ALL_PORTS_IN = re.compile(r"fromport\"?\s*[:=]\s*0\b|toport\"?\s*[:=]\s*65535|ports?:(?:all|0-65535|1-65535)\b"
                           r"|\"ipprotocol\"\s*:\s*\"-1\"", re.I)
_PORT_GIVEN = re.compile(r"port|^tcp:|^udp:", re.I)  # a bare number may be an ID (--projectId 1)
_PUBLIC = re.compile(r"system:unauthenticated|system:anonymous|acl=public|=publicread(?:write)?$"
                     r"|^--no-invoker-iam-check$"
                     r"|^(?:--acl=)?(?:public-read|public-read-write|authenticated-read)$|allusers|allauthenticatedusers"
                     r"|^--allow-blob-public-access(?:=true)?$|^--public-access(?:=(?:blob|container))?$"
                     r"|^--publicly-accessible$|group=all\b|launchpermission.*all|^--auth-type=none$|\"principal\"\s*:\s*(?:\"\*\"|\{\s*"
                     r"\"aws\"\s*:\s*\"\*\")|^--principal=\*$|blockpublic\w*=false|^--no-block-public"
                     r"|^--public-network-access=enabled$|^--anonymous-access(?:=true)?$", re.I)
_PUBLIC_PAIRS = {("--acl", "public-read"), ("--acl", "public-read-write"), ("--acl", "authenticated-read"),
                 ("--public-access", "blob"), ("--public-access", "container"), ("--principal", "*"),
                 ("--group-names", "all"), ("--allow-blob-public-access", "true"), ("--public-network-access",
                                                                                    "enabled"),
                 ("defacl", "public-read"), ("set", "public-read"), ("--auth-type", "none"),
                 ("--https-only", "false"), ("--default-action", "allow"), ("--end-ip-address", "255.255.255.255"),
                 ("--allow-principal", "user:*"), ("--allow-principal", "user:anonymous"),
                 ("--values-to-add", "all")}
_SECURITY = re.compile(r"^security$|trail|logging|\baudit|guardduty|securityhub|security-hub|defender|\bmfa|mfa-"
                       r"|recorder|macie|inspector|detector|encryption|\bwaf|shield|flow-?log|access-analyzer|securitycenter"
                       r"|security-center|sentinel|key-rotation|detective|secret-scanning|diagnostic|cloudaudit"
                       r"|containeranalysis|binaryauthorization|threat|antimalware|^auth$|2fa|two-factor|\botp\b|versioning"
                       r"|deletion-protection|termination-protection|authorized-networks|private-(?:nodes|endpoint)"
                       r"|network-policy|shielded|purge-protection|soft-delete|oslogin|serial-port|ssh-keys", re.I)
_TURN_OFF = re.compile(r"^(?:stop|disable|deactivate|suspend|pause|turn-off)(?:[-_:]\w[\w-]*)?$|^--no-enable$"
                       r"|^--enabled?=false$|^--status=disabled$|^--tier=free$|^--disabled$|^disabled$|^free$"
                       r"|^off$|.*readwritetype\"?\s*[:=]\s*\"?none|status=(?:suspended|disabled)$|^--enable-[\w-]+=false$"
                       r"|enable[\w-]*=false$", re.I)
_ADMIN_ROLE = re.compile(r"administratoraccess|iamfullaccess|poweruseraccess|roles/owner\b|roles/editor\b"
                         r"|roles/[\w.]*admin\b|roles/iam\.serviceaccount(?:tokencreator|user)|^cluster-admin$|--clusterrole=admin$"
                         r"|--clusterrole=cluster-admin|\"action\"\s*:\s*\"\*\""
                         r"|^--role=(?:owner|contributor|user access administrator)$", re.I)
# The value of a role or group option that names an administrator (--role Owner, --roles rol_admin, --group-name Admins)
_OFF_VALUE = re.compile(r"^--[\w-]+=(?:false|off|disabled|none|no)$", re.I)  # --mfa=false
_ROLE_OPTION = re.compile(r"^--(?:roles?|group(?:-name)?|clusterrole|permission-set)$")
_ADMIN_VALUE = re.compile(r"^(?:owner|contributor|user access administrator|superuser|root)$|admin", re.I)
_LOAD_BALANCER = re.compile(r"--type=loadbalancer|\"type\"\s*:\s*\"loadbalancer\"", re.I)
READ = re.compile(r"^(?:describe|list|get|show|view|lookup|search|plan|validate|diff|explain|ls|info|inspect|test"
                   r"|check|preview|what-if)(?:[-_:]|$)")
_GIVE = re.compile(r"^(?:attach|put|add|create|assign|grant|set|update|bind|modify)(?:[-_:]\w[\w-]*)?$|binding", re.I)
# Actions that open an account whatever their arguments: a whole policy replaced, the organisation's guard rails left,
# a console password set
_OPENING = frozenset({"set-iam-policy", "leave-organization", "create-login-profile", "update-login-profile",
                      "delete-account-password-policy", "disable-ebs-encryption-by-default"})
# An image, snapshot or key shared with another account (aws ... --user-ids 123456789012, Add=[{UserId=...}])
_SHARE_OPTIONS = frozenset({"--user-ids", "--values-to-add", "--account-ids", "--grantee-principal"})
_ACCOUNT = re.compile(r"^(?:\d{12}|arn:aws:iam::\d{12}:\S+)$")
_ADD_ACCOUNT = re.compile(r"Add=\[?\{UserId=(\d{12})", re.I)
_KEY_DELETION = re.compile(r"^schedule-?\w*-?deletion$|^schedule-deletion$", re.I)



# Programs that act on this machine, build or test: their words name tests, targets and containers, not cloud settings
LOCAL_TOOLS = frozenset({*(p for p in TEXT_AND_OWN if p not in ("kubectl", "oc", "helm")),
                         *PACKAGE_TOOLS,
                         "pytest", "py.test", "rspec", "jest", "vitest", "mocha", "ava", "tap", "phpunit", "pest",
                         "bats", "ctest", "nextest", "behave", "cucumber", "playwright", "cypress", "karma",
                         "eslint", "ruff", "flake8", "pylint", "mypy", "tsc", "prettier", "black", "rubocop",
                         "golangci-lint", "shellcheck", "ansible-lint", "vim", "nvim", "emacs", "code", "nano",
                         "systemctl", "service", "launchctl", "supervisorctl", "pm2", "tmux", "screen", "killall",
                         "pkill", "kill", "docker-compose", "podman-compose", "vagrant", "multipass", "minikube",
                         "kind", "k3d", "ip", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "wg", "wg-quick",
                         "sshuttle", "route", "ss", "netstat", "nmcli", "networksetup", "openvpn"})


def _note(facts: Facts, why: str) -> None:
    facts.signals.add("cloud-open")
    facts.notes.setdefault("cloud-open", f"why: {why}")


def pairs(words: list[str]) -> set[tuple[str, str]]:
    return {(a.lower(), b.lower()) for a, b in itertools.pairwise(words)}


def mark(facts: Facts, words: list[str]) -> None:
    """Raise cloud-open when these words open cloud security."""
    if facts.program in LOCAL_TOOLS:
        return  # docker stop audit-log, make stop-logging, pytest -k disable: this machine's, not a cloud's
    leading = [facts.sub.lower(), *(o.lower() for o in facts.operands[:3])]
    if any(READ.match(w) for w in leading):
        return  # describe-security-groups --filters ...0.0.0.0/0, terraform plan -var cidr=0.0.0.0/0
    lowered = [w.lower() for w in words if not w.lower().startswith(("--filter", "--query", "name=", "values="))]
    az_any = any(a.startswith("--source-address-prefix") and b in ("*", "internet", "any")
                 for a, b in pairs(words))  # az network nsg rule create --source-address-prefixes '*'
    az_any = az_any or (leading[:3] == ["network", "nsg", "rule"] and "create" in leading and not any(
        w.startswith("--source-address-prefix") for w in words) and ("--direction", "outbound") not in pairs(words))
    az_any = az_any or any(w in ("open-port", "open-ports") for w in leading) or (  # az vm open-port: from anywhere
        {("--subnet", "0.0.0.0"), ("--size", "0")} <= pairs(words))  # vultr-cli: 0.0.0.0 with a prefix size of 0
    if (az_any or any(_OPEN_CIDR.search(w) for w in lowered)) and "egress" not in " ".join(leading):
        ports = [w for w in lowered if _PORT_GIVEN.search(w)]
        admin = next((w for w in lowered if _ADMIN_PORT.search(_OPEN_CIDR.sub(" ", w))), None)
        every = next((w for w in lowered if _ALL_PORTS.match(w) or _ALL_PORTS_IN.search(w)), None)
        if admin or every or not ports:
            which = f"port {admin}" if admin else "every port"
            _note(facts, f"lets the whole internet (0.0.0.0/0) reach {which}")
            return
    public = next((w for w in words if _PUBLIC.search(w)), None) or next(
        (" ".join(p) for p in pairs(words) if p in _PUBLIC_PAIRS), None)
    if public:
        _note(facts, f"makes data or resources public ({public[:60]})")
        return
    if any(_LOAD_BALANCER.search(w) for w in lowered) and (port := next(
            (w for w in lowered if _ADMIN_PORT.search(w) and "port" in w), None)):
        _note(facts, f"puts an admin port on a public load balancer ({port})")
        return
    named = [w for w in leading if w and "/" not in w and not w.startswith("-")]  # not files, not flags
    if any((w.startswith("--no-") or _OFF_VALUE.search(w) or _TURN_OFF.match(w)) and _SECURITY.search(w)
           for w in lowered) or (
            any(_TURN_OFF.match(w) or w.startswith("--no-") for w in [*named, *lowered]) and any(
                _SECURITY.search(w) for w in named)):
        _note(facts, "turns off audit logging, MFA or a security service")
        return
    role = next((w for w in words if _ADMIN_ROLE.search(w)), None) or next(
        (b for a, b in pairs(words) if _ROLE_OPTION.match(a) and _ADMIN_VALUE.search(b)), None)
    if role and any(_GIVE.search(w) for w in leading):
        _note(facts, f"gives an administrator role ({role[:60]})")
        return
    if shared_with := next((b for a, b in pairs(words) if a in _SHARE_OPTIONS and _ACCOUNT.match(b)), None) or next(
            (m.group(1) for w in words if (m := _ADD_ACCOUNT.search(w))), None):
        _note(facts, f"shares an image, snapshot or key with another account ({shared_with})")
        return
    if every_right := next((f"{a} {b}" for a, b in pairs(words) if a.endswith("-permissions") and b == "all"), None):
        _note(facts, f"grants every permission ({every_right})")
        return
    if opening := next((w for w in leading if w in _OPENING), None):
        _note(facts, f"{opening} opens the account's security")
        return
    if any(_KEY_DELETION.match(w) for w in leading):
        _note(facts, "schedules a key's deletion")
