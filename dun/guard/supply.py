"""Supply chain: where packages come from and how they are verified, changed by the agent. Three kinds of change:

- a package manager's sources redirected for good (`npm config set registry`, `pip config set global.index-url`,
  `go env -w GOPROXY=...`, `gem sources --add`, `poetry source add`, `dotnet nuget add source`, an `.npmrc`,
  `pip.conf`, `.yarnrc.yml` or `.cargo/config.toml` written): package sources are the user's to choose, so any URL
  but this machine's is denied there (`npm config delete registry` goes back to the default);
- verification turned off anywhere (`--trusted-host`, `strict-ssl false`, `GOSUMDB=off`, `GONOSUMDB`,
  `GOINSECURE`, `GOFLAGS=-insecure`, `NODE_TLS_REJECT_UNAUTHORIZED=0`, `ssl_verify false`, `secure-http false`),
  and packages installed for one command from an unverified source (plain http, or a bare IP address);
- the project's manifests and lockfiles edited by hand toward other code: integrity hashes or checksums removed,
  locked URLs moved to another host, a dependency pointed at a URL, `replace` in go.mod or `[patch]`/`git =` in
  Cargo.toml pointing at another module, `overrides`/`resolutions` aliased to another package.

No registry is named here: what is judged is the change (a source replaced, a check turned off, a host changed), not
which host. The package managers' own edits of their lockfiles (`npm install`, `cargo update`) are not text edits and
stay free.
"""

from __future__ import annotations

import hashlib
import re

from dun.guard.effects import Facts

MANAGERS = frozenset({"pip", "pip3", "uv", "pipx", "poetry", "pdm", "pipenv", "hatch", "npm", "pnpm", "yarn", "bun",
                      "npx", "go", "gem", "bundle", "bundler", "composer", "conda", "mamba", "micromamba", "dotnet",
                      "nuget", "cargo", "deno", "mvn", "gradle", "sbt", "mix", "pub", "dart", "flutter", "swift"})
INSTALLS = frozenset({"install", "i", "add", "ci", "sync", "update", "upgrade", "get", "localinstall", "pip"})
CONFIG_WORDS = frozenset({"config", "sources", "source", "channels", "registry", "set-url"})
URL = re.compile(r"(?:git\+|sparse\+)?(?:https?|git|ssh|ftp)://[^\s'\",;)\]}>]+", re.I)
_HOST = re.compile(r"^(?:[a-z+]+://)?(?:[^@/]*@)?(\[[^\]]*\]|[^:/?#]*)", re.I)
_LOCAL = re.compile(r"^(?:localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|0\.0\.0\.0|[\w.-]+\.localhost"
                    r"|host\.docker\.internal)$", re.I)
_IP = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\])$", re.I)
# Settings that turn verification off: `strict-ssl false`, `ssl_verify: false`, `--trusted-host`, `GOSUMDB=off`
VERIFY_OFF = re.compile(
    r"(?i)(?:strict[-_]?ssl|ssl[-_]?verify|secure[-_]http|enable[-_]?strict[-_]?ssl|verify[-_]?ssl|sslverify"
    r"|check[-_]revoke)['\"]?\s*[:=\s]\s*['\"]?(?:false|no|0|off)\b|allow[-_]?insecure[-_]?protocol['\"]?\s*[:=(\s]\s*"
    r"['\"]?true|unsafe[-_]?http[-_]?whitelist|trusted[-_]host|\bGOSUMDB\s*=\s*['\"]?off|\bGONOSUMDB\s*=\s*['\"]?\*|\bGONOSUMCHECK\s*="
    r"|\bGOINSECURE\s*=|\bGOPRIVATE\s*=\s*['\"]?\*|\bGOFLAGS\s*=\s*['\"]?[^'\"\n]*-insecure|(?:^|\s)-insecure\b"
    r"|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0|GIT_SSL_NO_VERIFY\s*=\s*['\"]?(?:1|true)|--no-check-certificate|--skip-integrity-check|--update-checksums"
    r"|--no-verify-store-integrity|checksumBehavior['\"]?\s*:\s*['\"]?(?:ignore|update|reset)|verify-store-integrity\s*=\s*false")
# Environment variables that redirect or unverify a package manager for the command they are set for
SOURCE_VARS = re.compile(r"^(?:PIP_(?:EXTRA_)?INDEX_URL|PIP_FIND_LINKS|UV_(?:EXTRA_)?INDEX_URL|UV_INDEX"
                         r"|UV_DEFAULT_INDEX|npm_config_registry|NPM_CONFIG_REGISTRY|YARN_NPM_REGISTRY_SERVER|GOPROXY|CARGO_REGISTRIES_\w+"
                         r"|BUNDLE_MIRROR__\w+|COMPOSER_\w*REPO\w*)$")


# The package managers' own default indexes, by the first 16 hex digits of the SHA-256 of the host name (the project
# writes no registry host name): setting one back is not a redirect.
DEFAULT_HOSTS = frozenset({
    "0dc11026ac75c015", "70bb4000cd2fab03", "a4aa2ac280bb8d1a", "d6d7019ca9fcbf07", "c899567ee9068517",
    "00a7dc5a0cc38858", "9da5f32d96412512", "71741fe2460a6150", "be549aaf28b65cd0", "4189e62695dc2b69",
    "2c77714df232b07f", "7117c828d2afa4e2", "eb7e11c7f9ecbcf4", "789e46d79514e280", "3d01f3609be82d98",
    "4db460c55b85212e", "15bdb44dafa6843b", "317d2d52829b7812", "43c04ed1dabe979b", "386c042daaf7f1eb",
    "03e390c8d8a6f2cf"})


def default_host(url: str) -> bool:
    return hashlib.sha256(host(url).encode()).hexdigest()[:16] in DEFAULT_HOSTS


def foreign(url: str) -> bool:
    """A source that is neither a package manager's default nor this machine."""
    return not default_host(url) and not _LOCAL.match(host(url))


def host(url: str) -> str:
    m = _HOST.match(url)
    return (m.group(1) if m else "").lower()


def unsafe(url: str) -> str | None:
    """Why a package URL is unverified: plain http (or git://) to another machine, or a bare IP address."""
    h = host(url)
    if not h or _LOCAL.match(h):
        return None
    if re.match(r"(?i)(?:git\+|sparse\+)?(?:http|git|ftp)://", url):
        return f"plain {url.split('://')[0]} to {h}"
    return f"a bare IP address ({h})" if _IP.match(h) else None


def mark(facts: Facts, words: list[str], assigned: dict[str, str | None]) -> None:
    """Raise `supply-source` for a package manager's command that redirects its sources, turns verification off or
    installs from an unverified source."""
    if facts.program not in MANAGERS:
        return
    args = words[1:]
    env = [f"{k}={v}" for k, v in assigned.items() if v is not None]
    if why := _why(facts.program, args, env):
        facts.signals.add("supply-source")
        facts.notes["supply-source"] = f"why: {why}"


def _why(prog: str, args: list[str], env: list[str]) -> str | None:
    line = " ".join([*env, *args])
    if (m := VERIFY_OFF.search(line)) and not _local_trust(m, line):
        return f"turns package verification off ({m.group(0).strip()})"
    urls = URL.findall(line)
    for url in urls:
        if why := unsafe(url):
            return f"installs or configures packages from an unverified source ({why})"
    persistent = any(w in CONFIG_WORDS for w in args[:3]) or (prog == "go" and args[:2] == ["env", "-w"]) or \
        (prog in ("dotnet", "nuget") and "source" in args[:3])
    proxies = [p for a in args if a.startswith("GOPROXY=") for p in re.split(r"[,|]", a[8:])
               if p not in ("direct", "off")]
    redirect = [u for u in urls + proxies if foreign(u)]
    if persistent and redirect and not _scoped_only(args) and not any(a in ("get", "list", "show") for a in args[:3]):
        return "changes where the package manager downloads from, for every later install (the user's choice)"
    for i, a in enumerate(args):
        name, eq, value = a.partition("=")
        value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        if name in INDEX_OPTIONS and URL.match(value) and foreign(value):
            return f"installs from a package index the project does not use ({name} {value})"
    for a in env:
        name, _, value = a.partition("=")
        if SOURCE_VARS.match(name) and (why := unsafe(value) or ("another index" if foreign(value) else None)):
            return f"installs from an unverified source ({name}={value}: {why})"
    return None


# Where a manifest names a package index or repository (uv, poetry, pdm, Pipfile, requirements files, Gemfile,
# composer.json, Gradle, Maven)
_INDEX_TABLE = re.compile(r"(?im)\[\[?tool\.(?:uv\.index|poetry\.source|pdm\.source)|\bindex-url\s*=|\[\[source\]\]"
                          r"|^\s*(?:--(?:extra-)?index-url|--find-links|-i|-f)[\s=]|^\s*source\s+[\"']|\"repositories\"\s*:"
                          r"|\bmaven\s*\{|<(?:repository|pluginRepository|mirror)>")
INDEX_OPTIONS = frozenset({"-i", "--index-url", "--extra-index-url", "--index", "--default-index", "-f",
                           "--find-links", "--registry", "--source", "--extra-index", "--pre-index-url"})


def _local_trust(m: re.Match[str], line: str) -> bool:
    """`--trusted-host 127.0.0.1`: a package index on this machine (devpi, a test server) is trusted freely."""
    value = re.match(r"[\s=]*([^\s'\"]+)", line[m.end():])
    return "trusted" in m.group(0).lower() and value is not None and bool(_LOCAL.match(value.group(1).split(":")[0]))


def _scoped_only(args: list[str]) -> bool:
    """npm's per-scope registries (`@acme:registry`) and tokens are the project's own packages, not the default."""
    keys = [a for a in args if a.startswith("@") or "registry" in a]
    return bool(keys) and all(k.startswith("@") and ":registry" in k for k in keys)


# Files that hold package sources (a URL written here applies to every later install)
SOURCE_FILES = re.compile(r"(?:^|/)(?:\.npmrc|\.yarnrc|\.yarnrc\.yml|\.bunfig\.toml|bunfig\.toml|pip\.conf|pip\.ini"
                          r"|uv\.toml|\.condarc|condarc|\.cargo/config(?:\.toml)?|nuget\.config|NuGet\.Config"
                          r"|\.gemrc|\.bundle/config|auth\.json|settings\.xml|gradle\.properties|\.pypirc"
                          r"|\.envrc)$", re.I)
# Manifests whose dependencies can name a source
MANIFESTS = re.compile(r"(?:^|/)(?:package\.json|pyproject\.toml|go\.mod|Cargo\.toml|Gemfile|composer\.json|Pipfile"
                       r"|requirements[^/]*\.(?:txt|in)|constraints[^/]*\.txt|setup\.cfg|build\.gradle(?:\.kts)?"
                       r"|settings\.gradle(?:\.kts)?|pom\.xml|deno\.jsonc?|mix\.exs|pubspec\.yaml|Package\.swift)$")
LOCKFILES = re.compile(r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?"
                       r"|Cargo\.lock|poetry\.lock|uv\.lock|Pipfile\.lock|pdm\.lock|go\.sum|composer\.lock"
                       r"|Gemfile\.lock|packages\.lock\.json|flake\.lock|gradle\.lockfile|pubspec\.lock|mix\.lock"
                       r"|Package\.resolved|requirements[^/]*\.txt|deno\.lock)$")
HASH_KEY = re.compile(r"(?i)integrity|--hash|checksum|\bsha(?:1|256|384|512)\b|[\"']?\bhash[\"']?\s*[:=]|\bh1:|shasum")
HASH_VALUE = re.compile(r"[0-9a-fA-F]{32,}|sha(?:1|256|384|512)-[A-Za-z0-9+/=]{20,}|h1:[A-Za-z0-9+/=]{20,}")
# A source key whose value replaces the default index (not a per-scope one)
DEFAULT_SOURCE = re.compile(r"(?im)^\s*(?:registry|npmRegistryServer|index[-_]url|extra[-_]index[-_]url|find[-_]links"
                            r"|replace-with|default-index|channels|default_channels|mirror\.[^=\s]*|url)"
                            r"(?:\s*[:=]|\s+[\"'])")
# Dependencies pointed at another module or a direct source
_GO_REPLACE = re.compile(r"(?m)^\s*(?:replace\s+)?(\S+)(?:\s+v\S+)?\s*=>\s*(\S+)")
_CARGO_GIT = re.compile(r"\bgit\s*=\s*\"([^\"]+)\"|\bregistry(?:-index)?\s*=\s*\"([^\"]+)\"")
_NPM_ALIAS = re.compile(r"\"[^\"]+\"\s*:\s*\"(npm:[^\"]+|git\+[^\"]+|github:[^\"]+)\"")


def judge(path: str, added: str, removed: str) -> str | None:
    """Why this change of a sources file, a manifest or a lockfile points packages at unverified code, or None."""
    is_source, is_manifest, is_lock = SOURCE_FILES.search(path), MANIFESTS.search(path), LOCKFILES.search(path)
    if not (is_source or is_manifest or is_lock):
        return None
    if (m := VERIFY_OFF.search(added)) and not _local_trust(m, added):
        return f"turns package verification off ({m.group(0).strip()})"
    for url in URL.findall(added):
        if why := unsafe(url):
            return f"points packages at an unverified source ({why})"
    if is_source and (m := DEFAULT_SOURCE.search(added) or _INDEX_TABLE.search(added)) and any(
            foreign(u) for u in URL.findall(added[m.start():])):
        return f"changes where packages are downloaded from ({m.group(0).strip()}...), the user's choice"
    if is_manifest and _INDEX_TABLE.search(added) and any(foreign(u) for u in URL.findall(added)):
        return "adds a package index to the project's manifest (where its packages come from, the user's choice)"
    if is_lock:
        if HASH_KEY.search(removed) and not HASH_VALUE.search(added):
            return "removes integrity hashes or checksums from a lockfile"
        if re.search(r"\bresolved\b", removed) and not re.search(r"\bresolved\b", added):
            return "removes the locked URLs of a lockfile (resolved)"
        old, new = {host(u) for u in URL.findall(removed)}, {host(u) for u in URL.findall(added)}
        if old and new - old:
            return f"moves locked packages to another host ({sorted(new - old)[0]})"
    if path.endswith("go.mod"):
        for old_mod, new_mod in _GO_REPLACE.findall(added):
            if not new_mod.startswith((".", "/")) and new_mod.split("@")[0] != old_mod:
                return f"replaces the Go module {old_mod} with another one ({new_mod})"
    if path.endswith("Cargo.toml") and ("[patch" in added or "[replace" in added or "[source" in added) and \
            _CARGO_GIT.search(added):
        return "patches a crate with code from another source ([patch] with git or a registry)"
    if path.endswith("package.json") and (m := _NPM_ALIAS.search(added)):
        return f"points a dependency at another package or a repository ({m.group(1)})"
    return None
