"""Secrets and the commands that send them off the machine: which paths hold keys, tokens and credentials, which
programs send what (files named in their options, their stdin, `$(...)` in their arguments), and which commands
print the environment. The walker raises the `exfiltrate` signal on a sender that sends one, and on a copy of one
into the repository (where it can be committed and pushed).

Sending a token in an authentication header (`curl -H "Authorization: Bearer $GITHUB_TOKEN" ...`) is how tokens are
used and stays allowed; the same variable in a URL or a request body, the whole environment, or a key file is not.
"""

from __future__ import annotations

import posixpath
import re
from fnmatch import fnmatchcase

from dun.guard import secretfiles
from dun.guard.expand import Ctx, Env, Val
from dun.guard.options import Spec, parse
from dun.guard.paths import classify, normalize, under

# Under the home directory: (glob over the path relative to HOME, name shown).
_HOME_SECRETS = (
    (".ssh/id_*", "an SSH key"), (".ssh/*key*", "an SSH key"), (".ssh/*.pem", "an SSH key"), (".ssh", "SSH keys"),
    (".ssh/{}", "SSH keys"), (".aws", "AWS credentials"), (".aws/*", "AWS credentials"),
    (".config/gh/*", "GitHub CLI tokens"), (".config/gh", "GitHub CLI tokens"), (".netrc", ".netrc passwords"),
    (".git-credentials", "git credentials"), (".docker/config.json", "registry credentials"),
    (".kube/config", "Kubernetes credentials"), (".kube", "Kubernetes credentials"),
    (".npmrc", "npm tokens"), (".pypirc", "PyPI tokens"),
    (".gnupg", "GPG keys"), (".gnupg/*", "GPG keys"), (".config/gcloud", "Google Cloud credentials"),
    (".config/gcloud/*", "Google Cloud credentials"), (".azure", "Azure credentials"),
    (".azure/*", "Azure credentials"),
    (".password-store*", "passwords"), (".local/share/keyrings*", "keyrings"), (".config/rclone/*", "rclone tokens"),
    (".cargo/credentials*", "crates.io tokens"), (".gem/credentials", "RubyGems keys"), (".m2/settings*.xml", "Maven "
     "credentials"), (".vault-token", "a Vault token"), (".terraform.d/credentials*", "Terraform tokens"),
    (".config/hub", "GitHub tokens"), (".config/glab-cli*", "GitLab tokens"), (".claude/.credentials*", "Claude "
     "credentials"), (".codex/auth*", "Codex credentials"), (".config/op*", "1Password"), (".env", "a .env file"),
    (".*_history", "shell and client history"), (".*history", "shell and client history"),
    (".local/share/fish/fish_history", "shell history"), (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"), (".mylogin.cnf", "MySQL passwords"), (".s3cfg", "S3 keys"), (".boto", "cloud keys"),
    (".oci/*", "Oracle Cloud keys"), (".config/doctl/*", "DigitalOcean tokens"), (".fly/*", "Fly.io tokens"),
    (".config/heroku*", "Heroku tokens"), (".composer/auth.json", "Composer tokens"),
    (".config/composer/auth.json", "Composer tokens"), (".nuget/NuGet/NuGet.Config", "NuGet credentials"),
    (".config/NuGet/NuGet.Config", "NuGet credentials"), (".hex/hex.config", "Hex keys"),
    (".mix/hex.config", "Hex keys"), (".ivy2/.credentials", "Ivy credentials"),
    (".sbt/*credentials*", "sbt credentials"), (".yarnrc.yml", "Yarn tokens"), (".terraformrc", "Terraform tokens"),
    (".pub-cache/credentials.json", "pub.dev tokens"),
    (".config/dart/pub-credentials.json", "pub.dev tokens"), (".config/pip/pip.conf", "package index credentials"),
    (".pip/pip.conf", "package index credentials"), (".luarocks/upload_config.lua", "LuaRocks keys"),
    (".gradle/gradle.properties", "Gradle credentials"), (".config/netlify/*", "Netlify tokens"),
    (".local/share/com.vercel.cli/*", "Vercel tokens"), (".config/configstore/*", "tool tokens"),
    (".wrangler/*", "Cloudflare tokens"), (".config/.wrangler/*", "Cloudflare tokens"),
    *secretfiles.HOME,
)
_SYSTEM_SECRETS = (("/etc/shadow", "password hashes"), ("/etc/gshadow", "password hashes"),
                   ("/etc/sudoers*", "sudoers"), ("/etc/ssl/private*", "TLS keys"), ("/proc/*/environ", "the "
                   "environment"), ("/root/*", "root's files"), ("/etc/passwd", "the user list"),
                   *secretfiles.SYSTEM)
_NOT_SECRET = re.compile(r"\.pub$|known_hosts|^\.ssh/config$|\.env\.(example|sample|template|dist|defaults?)$")
_FILE_SECRETS = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", "*.p12", "*.pfx",
                 "*.keystore", "*.jks", "credentials.json", "service-account*.json", "secrets.y*ml", "*.kdbx",
                 ".git-credentials", ".netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".*_history", ".*history",
                 *secretfiles.FILES)
SECRET_VAR = re.compile(r"\$\{?([A-Za-z_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|ACCESS_KEY|"
                        r"CREDENTIAL|AUTH)[A-Za-z0-9_]*)")
_HEADER_OPTIONS = frozenset({"-H", "--header", "-u", "--user", "--oauth2-bearer", "--proxy-user", "-A", "--user-agent",
                             "--auth", "-a"})
ENV_DUMPS = frozenset({"env", "printenv", "export", "set", "declare", "typeset", "compgen"})
SENDERS = frozenset({"tftp", "curl", "wget", "http", "https", "xh", "xhs", "nc", "ncat", "netcat", "socat", "telnet",
                     "docker", "podman", "oc", "s3cmd", "mc",
                     "ssh", "scp", "sftp", "rsync", "rclone", "aws", "gsutil", "az", "gh", "mail", "mailx", "mutt",
                     "sendmail", "msmtp", "kubectl", "dig", "nslookup", "host", "ping", "traceroute", "ftp",
                     "lftp", "smbclient", "git"})
_STDIN_SENDERS = frozenset({"tftp", "curl", "wget", "http", "https", "xh", "xhs", "nc", "ncat", "netcat", "socat",
                            "telnet", "ssh", "mail", "mailx", "mutt", "sendmail", "msmtp", "openssl", "ftp", "lftp",
                            "sftp", "smbclient"})
_COPIES = frozenset({"cp", "install", "rsync"})
_CURL = Spec("dFTHuAe", frozenset({"--data", "--data-binary", "--data-raw", "--data-urlencode", "--form", "--json",
                                   "--upload-file", "--form-string", "--header", "--url", "--user", "--user-agent"}))
_COPY_SPECS = {"scp": Spec("cFiJlmoPSD"), "sftp": Spec("BbcDFiJloPRSs"), "rclone": Spec(),
               "rsync": Spec("eBfT", frozenset({"--rsh", "--filter", "--exclude", "--include", "--log-file"}))}
_PATHISH = re.compile(r"(?:~|\$\{?HOME\}?|/)[^\s'\"|;&<>()]*|\.env[\w.-]*")


def secret_path(path: str, env: Env) -> str | None:
    """What secret `path` (absolute, normalized; `{}` for "anything under") holds, or None."""
    if path.startswith(env.home + "/"):
        rel = path[len(env.home) + 1:]
        if _NOT_SECRET.search(rel) and not rel.endswith("/{}"):
            return None
        for pattern, name in _HOME_SECRETS:
            if fnmatchcase(rel, pattern) or under(rel, pattern):
                return name
    for pattern, name in _SYSTEM_SECRETS:
        if fnmatchcase(path, pattern):
            return name
    base = posixpath.basename(path)
    if not _NOT_SECRET.search(base) and any(fnmatchcase(base, p) for p in _FILE_SECRETS):
        return f"a secrets file ({base})"
    return None


_MAYBE = re.compile(r"ssh|aws|env|cred|netrc|npmrc|pypirc|gnupg|gcloud|azure|kube|docker|gh|shadow|sudoers|private"
                    r"|\.pem|\.key|id_|token|secret|passw|keyring|vault|\.p12|pfx|jks|kdbx|config|\.m2|\.gem|cargo|hub"
                    r"|glab|claude|codex|root|account|history|pgpass|my\.cnf|s3cfg|boto|oci|doctl|fly|heroku|composer"
                    r"|gradle|netlify|vercel|configstore|wrangler|\*|\{\}" + secretfiles.MAYBE,
                    re.I)  # cheap: most operands aren't secrets


def val_secret(val: Val, ctx: Ctx, env: Env) -> str | None:
    if not val.text or val.text == "-" or not _MAYBE.search(val.text):
        return None
    if val.text.startswith("~/"):  # curl -F f=@~/.ssh/id_rsa: no shell expands it, but the intent is plain
        val = Val(env.home + val.text[1:])
    if re.fullmatch(r"/proc/[^/]+/environ", val.text):  # /proc/$$/environ
        return "the environment"
    return secret_path(classify(val, ctx, env)[0], env)


def text_secret(text: str, ctx: Ctx, env: Env) -> str | None:
    """A secret a command line (a `$(...)` body) reads: a secret path it names, or the whole environment."""
    words = text.split()
    if words and posixpath.basename(words[0]) in ENV_DUMPS and (len(words) == 1 or words[1] in ("-p", "-x", "|")):
        return "the environment"
    if "auth token" in text or "credential fill" in text or "find-generic-password" in text:
        return _STORED_TOKEN
    if words[:1] == ["printenv"] and len(words) == 2 and SECRET_VAR.match("$" + words[1]):
        return f"${words[1]}"  # $(printenv GITHUB_TOKEN)
    for m in _PATHISH.finditer(text):
        raw = re.sub(r"^(~|\$\{?HOME\}?)", env.home, m.group(0)).replace("*", "{}")
        path = normalize(raw, ctx.cwd)
        if path is not None and (name := secret_path(path, env)):
            return name
    return None


# Commands that print a secret: (program, a word among its arguments).
_PRINTERS = (("gpg", "--export-secret-keys"), ("gpg", "--export-secret-subkeys"), ("gpg2", "--export-secret-keys"),
             ("gh", "token"), ("aws", "aws_secret_access_key"), ("aws", "get-session-token"),
             ("aws", "get-secret-value"), ("pass", "show"), ("op", "read"), ("vault", "read"), ("vault", "get"),
             ("security", "find-generic-password"), ("security", "find-internet-password"), ("git", "fill"),
             ("kubectl", "secret"), ("kubectl", "secrets"), ("gcloud", "print-access-token"),
             ("az", "get-access-token"), ("docker", "--show-stored"), ("aws", "export-credentials"),
             ("kubectl", "--raw"), ("heroku", "auth:token"), ("gcloud", "print-identity-token"), ("vault", "token"),
             *secretfiles.PRINTERS)
# Code that prints the whole environment (print(os.environ), JSON.stringify(process.env), %ENV, ENV.to_h)
ENV_DUMP_CODE = re.compile(r"(?<!env=)(?<!env = )\bos\.environ\b(?!\s*\[|\s*\.\s*(?:get|setdefault|pop|copy)\b)"
                           r"|\bprocess\.env\b(?!\s*(?:\.|\[))|\bENV\.(?:to_h|to_a|each|inspect|keys|map|sort)\b"
                           r"|%ENV\b|\bgetenv\(\s*\)|\$_ENV\b|\bDeno\.env\.toObject\(\)|^\s*(?:env|\$ENV)\s*$")


def printed_secret(prog: str, args: list[Val]) -> str | None:
    """The secret a command prints (gpg --export-secret-keys, gh auth token, aws configure get ...)."""
    words = {a.text for a in args}
    for name, word in _PRINTERS:
        if prog == name and word in words:
            return f"the output of {name} {word}"
    return secretfiles.printed(prog, words)


_STORED_TOKEN = "a stored token"
INTERPRETERS = re.compile(r"(python|pypy|node|nodejs|bun|deno|perl|ruby|php)[0-9.]*")


def sent_files(prog: str, args: list[Val]) -> list[Val]:
    """The local files a sender sends: curl -F f=@x / -d @x / -T x, wget --post-file, httpie f@x, scp/rsync/rclone
    sources with a remote destination, aws s3 cp/gsutil cp to a bucket, gh gist create, --from-file=..."""
    words = [a.text for a in args]
    out: list[Val] = []
    if prog == "curl":
        o = parse(args, _CURL)
        for v in o.value("-d", "--data", "--data-binary", "--data-urlencode", "--json"):
            if "@" in v.text:
                out.append(Val(v.text.split("@", 1)[1]))
        for v in o.value("-F", "--form"):
            value = v.text.partition("=")[2]
            if value[:1] in ("@", "<"):
                out.append(Val(value[1:].split(";")[0]))
        out += o.value("-T", "--upload-file")
    elif prog == "wget":
        out += [Val(w.split("=", 1)[1]) for w in words if w.startswith(("--post-file=", "--body-file="))]
        out += [args[i + 1] for i, w in enumerate(words[:-1]) if w in ("--post-file", "--body-file")]
    elif prog in ("http", "https", "xh", "xhs"):
        out += [Val(re.split(r"=?@", w, maxsplit=1)[1]) for w in words if re.match(r"^[\w-]*=?@", w)]
    elif prog in ("scp", "rsync", "rclone", "sftp"):
        operands = parse(args, _COPY_SPECS[prog]).operands
        if len(operands) >= 2 and re.match(r"^[\w.@-]+:", operands[-1].text):
            out += operands[:-1]
    elif prog in ("tftp", "ftp", "lftp", "smbclient"):  # tftp HOST -c put FILE, lftp -e 'put FILE; bye'
        out += [args[i + 1] for i, w in enumerate(words[:-1]) if w in ("put", "mput", "send")]
        out += [Val(m.group(1)) for w in words for m in re.finditer(r"\b(?:m?put|send|reput)\s+(\S+)", w) if " " in w]
    elif prog == "socat":  # socat FILE:/path TCP:host:port
        out += [Val(re.split(r"[,]", w.split(":", 1)[1])[0]) for w in words
                if re.match(r"(?i)^(?:FILE|OPEN|GOPEN|READ)?:?/|^(?i:FILE|OPEN|GOPEN):", w) and ":" in w]
    elif prog in ("aws", "gsutil"):
        operands = [a for a in args if not a.text.startswith("-")]
        if len(operands) >= 2 and re.match(r"^(s3|gs)://", operands[-1].text):
            out += operands[:-1]
    elif prog == "gh" and words[:2] == ["gist", "create"]:
        out += [a for a in args[2:] if not a.text.startswith("-")]
    elif (prog in ("docker", "podman", "kubectl", "oc") and words[:1] == ["cp"]) or (
            prog == "s3cmd" and words[:1] in (["put"], ["sync"])) or (prog == "mc" and words[:1] in (["cp"],
                                                                                                 ["mirror"])):
        operands = [a for a in args[1:] if not a.text.startswith("-")]  # docker cp KEY box:/tmp, mc cp KEY alias/b
        if len(operands) >= 2 and (":" in operands[-1].text or prog in ("s3cmd", "mc")):
            out += operands[:-1]
    out += [Val(w.split("=", 1)[1]) for w in words if w.startswith(("--from-file=", "--file="))]
    out += [args[i + 1] for i, w in enumerate(words[:-1]) if w in ("-f", "--file", "-a", "--attach")
            and prog in ("az", "mail", "mailx", "mutt")]
    return out


def secret_var_in(words: list[str]) -> str | None:
    """A secret variable among the words (printenv GITHUB_TOKEN, echo "$AWS_SECRET_ACCESS_KEY")."""
    for word in words:
        m = SECRET_VAR.search(word) or re.fullmatch(SECRET_VAR.pattern.replace(r"\$\{?", ""), word)
        if m:
            return f"${m.group(1)}"
    return None


def leaked_var(raw_words: list[str]) -> str | None:
    """A secret variable a sender puts in a URL or a body (not in an authentication header)."""
    for i, word in enumerate(raw_words):
        m = SECRET_VAR.search(word)
        if m is None:
            continue
        header = (i > 0 and raw_words[i - 1] in _HEADER_OPTIONS) or word.startswith(
            ("-H", "--header", "-u", "--user")) or re.match(r"^['\"]?[\w-]+:(?!//)", word)
        if not header or "AWS_SECRET_ACCESS_KEY" in word:
            return f"${m.group(1)}"
    return None


def exfiltration(prog: str, args: list[Val], raw_words: list[str], stdin: tuple[str | None, str | None], ctx: Ctx,
                 env: Env, held: tuple[set[str], dict[str, str]]) -> str | None:
    """What secret this command sends off the machine (or copies into the repository), or None. `stdin`: (the
    secret flowing in, the known text flowing in)."""
    stdin_secret, stdin_text = stdin
    secret_vars, secret_files = held
    if prog in _COPIES and len(args) >= 2:
        operands = [a for a in args if not a.text.startswith("-")]
        if len(operands) >= 2 and classify(operands[-1], ctx, env)[1] in ("inside", "repo"):
            for v in operands[:-1]:
                if (name := val_secret(v, ctx, env)) and not posixpath.basename(v.text).startswith(".env"):
                    return f"{name}, copied into the repository"
    if stdin_secret and ((INTERPRETERS.fullmatch(prog) and any(_NET_API.search(a.text) for a in args)) or (
            prog == "openssl" and any(a.text == "s_client" for a in args))):
        return stdin_secret  # cat key | python3 -c '...requests.post(...)', openssl s_client < key
    if prog == "git" and args[:1] and args[0].text == "add":  # git add -f .env: staged to be committed and pushed
        for v in args[1:]:
            if not v.text.startswith("-") and (name := val_secret(v, ctx, env)) and name.startswith("a secrets file"):
                return f"{name}, staged for commit"
    if prog not in SENDERS:
        return None
    for v in sent_files(prog, args):
        if name := val_secret(v, ctx, env) or secret_files.get(classify(v, ctx, env)[0]):
            return name
    if stdin_secret and (prog in _STDIN_SENDERS or (prog == "gh" and "gist" in {a.text for a in args})):
        return stdin_secret
    if stdin_text and prog in ("sftp", "ftp", "lftp", "smbclient") and (name := text_secret(stdin_text, ctx, env)):
        return name
    for name in secret_vars:
        if any(re.search(rf"\$\{{?{re.escape(name)}\b", a.text) for a in args):
            return f"${name}, read from a secret"
    headers = {id(v) for v in parse(args, _CURL).value("-H", "--header", "-u", "--user")} if prog in (
        "curl", "wget") else {id(v) for v in args if re.match(r"^[\w-]+:(?!//)", v.text)}
    for v in args:
        for body in v.subs:
            name = text_secret(body, ctx, env)
            if name and not (id(v) in headers and name == _STORED_TOKEN):  # -H "Authorization: $(gh auth token)"
                return name
    return leaked_var(raw_words) if prog not in ("ssh", "git", "kubectl", "docker", "podman", "oc", "mc") else None


_NET_API = re.compile(r"requests\.\w+\s*\(|urlopen|urllib|http\.client|httpx|aiohttp|\bfetch\s*\(|axios"
                      r"|require\(\s*['\"](?:https?|net|dgram|tls)['\"]\s*\)|\bhttps?\.request|TCPSocket|UDPSocket"
                      r"|https?\.request|Net::HTTP|LWP|HTTP::Tiny|curl_exec|socket\.|\bsmtplib|WebSocket|RestClient")
_CODE_SECRET = re.compile(r"AWS_SECRET_ACCESS_KEY"
                          r"|\.ssh/|\.aws/|\.netrc|\.git-credentials|\.docker/config|\.kube/config|\.npmrc|\.pypirc"
                          r"|\.gnupg|gcloud/|\.config/gh|/etc/shadow|/environ\b|(?<![\w.])\.env\b|dict\(os\.environ\)"
                          r"|str\(os\.environ\)|os\.environ\.copy\(\)|json\.dumps\(\s*(?:dict\()?os\.environ"
                          r"|JSON\.stringify\(\s*process\.env\s*\)|\bENV\.to_h\b|%ENV\b"
                          r"|(?:process\.env|environ|ENV|getenv|Deno\.env\.get)\W{1,3}[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD"
                          r"|PASSWD|API_?KEY|PRIVATE_KEY|ACCESS_KEY|CREDENTIAL)")  # process.env.OPENAI_API_KEY


def code_exfiltration(code: str) -> bool:
    """Interpreter code that uses the network and reads a key file or dumps the environment."""
    return bool(_NET_API.search(code)) and bool(_CODE_SECRET.search(code))
