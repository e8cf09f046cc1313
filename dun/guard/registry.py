"""Who may publish or administer: a package's, repository's or organisation's owners and members changed (`gem owner
--add`, `mix hex.owner add`, `npm team add`, `heroku access:add`, `X teams invite`, `gh api` memberships and
collaborators, GraphQL mutations that add them), and long-lived credentials minted, widened or stored (`npm token
create`, access and service-account keys, deploy and SSH keys, `gh auth refresh -s admin:org`, `cargo login`). Listing
them stays free."""

from __future__ import annotations

import itertools
import re

from dun.guard.effects import Facts
from dun.guard.hosts import host_of, is_local

_OWNER_WORDS = frozenset({"owner", "owners", "maintainer", "maintainers", "collaborator", "collaborators", "team",
                          "org", "member", "members", "hex.owner", "owner:add", "maintainers:add", "collaborators:add"})
_OWNER_CHANGE = frozenset({"add", "rm", "remove", "transfer", "invite", "grant", "set", "-a", "--add", "-r",
                           "--remove"})
# Commands that store a publishing credential on this machine
_STORES_TOKEN = {"cargo": ("login",), "gem": ("signin",), "npm": ("login", "adduser"), "pnpm": ("login", "adduser"),
                 "yarn": ("login",), "mix": ("hex.user",)}
_TOKEN_WORDS = re.compile(r"^(?:tokens?|api-?keys?|access-?keys?|pat|pats|personal-access-tokens?|authorizations?"
                          r"|credentials?|service-accounts?-keys?|auth|ssh-keys?|gpg-keys?|deploy-keys?)$", re.I)
_OWNER_ACTION = re.compile(r"^(?:access|collaborators?|members?|sharing|owners?|maintainers?|teams?|orgs?|apps)"
                           r":(?:add|update|transfer|invite)$|^invite$|^\w+:invite$|^add-(?:member|owner|collaborator|maintainer|admin)s?$"
                           r"|^invite-\w+$", re.I)
_WIDE_SCOPES = re.compile(r"admin:|delete_repo|delete:packages|write:org|site_admin|\bsudo\b", re.I)
_TOKEN_MAKE = frozenset({"create", "new", "generate", "add", "issue", "mint", "reset"})
_TOKEN_ACTIONS = re.compile(r"^(?:create-access-key|create-service-specific-credential|create-for-rbac"
                            r"|authorizations:create|tokens?:create|create-token|generate-token|create-api-key"
                            r"|create-login-profile|create[-_]?(?:deploy|access|api|auth)[-_]?(?:key|token)s?)$", re.I)
_ACCESS_PATH = re.compile(r"/(?:collaborators|outside_collaborators|memberships|members|invitations|owners|admins"
                          r"|maintainers|access_tokens|deploy_tokens|personal_access_tokens|tokens|keys)\b"
                          r"|/teams/[^/]+/(?:repos|members)", re.I)
_ACCESS_MUTATION = re.compile(r"\bmutation\b.*\b(?:add(?:Collaborator|Member|DeployKey)|updateTeamRepository"
                              r"|createIpAllowListEntry|updateEnterpriseOwner\w*|inviteEnterpriseAdmin)\b", re.S)
_API_WRITE = re.compile(r"^(?:-X|--method)=(?:PUT|POST|PATCH)$", re.I)




def _note(facts: Facts, why: str) -> None:
    facts.signals.add("registry-owner")
    facts.notes.setdefault("registry-owner", f"why: {why}")


def mark(facts: Facts, prog: str, words: list[str]) -> None:
    """Raise registry-owner when a call changes who owns a package, repository or organisation, or mints or stores a
    long-lived credential."""
    if prog == "gh" and facts.sub == "api" and any(_ACCESS_MUTATION.search(w) for w in words):
        _note(facts, "a GraphQL mutation that gives someone access")
        return
    if prog in ("gh", "glab") and facts.sub == "api" and any(_ACCESS_PATH.search(o) for o in facts.operands) and (
            any(_API_WRITE.match(v) for v in facts.values) or {"-f", "-F", "--field", "--raw-field", "--input"} &
            set(facts.flags)):
        _note(facts, "gives someone access to a repository or organisation through the API")
        return
    leading = [facts.sub.lower(), *(o.lower() for o in facts.operands[:3])]
    if any(_OWNER_ACTION.match(w) for w in leading[:3]):
        _note(facts, f"gives others access to {prog}'s apps, teams or packages ({' '.join(leading)})")
        return
    if prog == "gh" and leading[:1] == ["auth"] and any(_WIDE_SCOPES.search(b) for a, b in itertools.pairwise(words)
                                                          if a in ("-s", "--scopes")):
        _note(facts, "widens the stored token to administration or deletion scopes")
        return
    if prog in ("npm", "pnpm", "yarn") and leading[:1] == ["profile"] and "disable-2fa" in leading:
        _note(facts, "turns off two-factor authentication of the publishing account")
        return
    stores = (leading[:1] and leading[0] in _STORES_TOKEN.get(prog, ())) or (prog == "yarn" and leading[:2] == [
        "npm", "login"]) or (prog == "poetry" and leading[:1] == ["config"] and any(
            w.startswith(("pypi-token.", "http-basic.")) for w in leading))
    if stores and not any(is_local(h) for w in words if (h := host_of(w.split("=", 1)[-1])) is not None):  # verdaccio
        _note(facts, f"stores a publishing credential ({prog} {' '.join(w for w in leading if w)})")
        return
    if _OWNER_WORDS.intersection(leading[:2]) and (_OWNER_CHANGE.intersection(leading) or
                                                   _OWNER_CHANGE.intersection(facts.flags)):
        _note(facts, f"changes who owns {prog}'s package or repository ({' '.join(leading[:3])})")
        return
    if any(_TOKEN_ACTIONS.match(w) for w in leading) or any(
            _TOKEN_WORDS.match(a) and b in _TOKEN_MAKE for a, b in itertools.pairwise(leading)) or (
            "service-accounts" in leading and "keys" in leading and "create" in leading):
        _note(facts, f"mints a long-lived credential ({prog} {' '.join(w for w in leading if w)})")
