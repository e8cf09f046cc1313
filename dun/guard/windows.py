"""Windows tools run from WSL (`powershell.exe`, `pwsh`, `cmd.exe /c`, `reg.exe`, `schtasks.exe`, `netsh.exe`, ...),
read with their own syntax. Deletes (`Remove-Item -Recurse`, `rd /s`, `del /s`, `robocopy /MIR`), uploads
(`Invoke-WebRequest -InFile`) and downloads run as code (`iwr ... | iex`) come to the shell command that does the same
(`rm -rf /mnt/c/Users/...`, `curl -T`, `curl | sh`), judged by the rules for files, secrets and downloads, with
`C:\\...`, `$env:USERPROFILE` and `%APPDATA%` read as the paths WSL sees. What has no peer here (the registry, scheduled
tasks, Defender, the firewall, users, event logs, boot settings, shadow copies, WSL distributions) is judged by the
table below and raises `win-destroy`. `-EncodedCommand` is decoded (UTF-16LE base64) and read as well.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
from collections.abc import Mapping

from dun.guard.effects import Facts

PROFILE = "/mnt/c/Users/user"  # the Windows user's profile as WSL sees it (the name does not matter: it is outside)
_VARS = ((r"(?i)\$env:USERPROFILE|%USERPROFILE%|\$env:HOMEPATH|%HOMEPATH%", PROFILE),
         (r"(?i)\$env:APPDATA|%APPDATA%", PROFILE + "/AppData/Roaming"),
         (r"(?i)\$env:LOCALAPPDATA|%LOCALAPPDATA%", PROFILE + "/AppData/Local"),
         (r"(?i)\$env:(?:SystemRoot|windir)|%(?:SystemRoot|windir)%", "/mnt/c/Windows"),
         (r"(?i)\$env:ProgramData|%ProgramData%", "/mnt/c/ProgramData"),
         (r"(?i)\$env:(?:TEMP|TMP)|%(?:TEMP|TMP)%", PROFILE + "/AppData/Local/Temp"))
_DRIVE = re.compile(r"^([A-Za-z]):(?:[\\/]|$)")
# cmd.exe and Windows programs, on their command line lowercased: (regex, what it does)
WIN_TOOLS = (
    (r"^format\b", "formats a disk"), (r"^diskpart\b", "partitions or wipes disks"),
    (r"^reg (?:delete|import|restore|unload|copy)\b", "deletes or replaces registry keys"),
    (r"^reg add\b.*\\(?:run|runonce|runservices|winlogon|image file execution options|policies|services)\b",
     "makes a program start by itself or changes policy through the registry"),
    (r"^schtasks\b.*/(?:create|change)\b", "schedules a task on the Windows side"),
    (r"^schtasks\b.*/delete\b", "deletes Windows scheduled tasks"),
    (r"^taskkill\b.*/im\b", "kills Windows processes by name"),
    (r"^net1? (?:user|localgroup)\b.*/(?:add|delete|del|active)", "adds, removes or changes Windows users or groups"),
    (r"^net1? stop\b", "stops a Windows service"),
    (r"^netsh\b.*(?:state\s+off|opmode\s+(?:mode=)?disable|\breset\b|portproxy\s+add|\bdisable\b)",
     "turns the Windows firewall off, resets it or forwards a port"),
    (r"^icacls\b.*(?:/grant\S*\s+['\"]?(?:everyone|\*s-1-1-0|users|authenticated users)|/reset\b.*/t)",
     "opens Windows permissions to everyone"), (r"^takeown\b.*/r\b", "takes ownership of a Windows tree"),
    (r"^wevtutil (?:cl|clear-log|sl)\b", "clears or turns off Windows event logs"),
    (r"^bcdedit\b.*/(?:set|delete|deletevalue|import)\b", "changes Windows boot settings"),
    (r"^(?:vssadmin delete|wmic\b.*shadowcopy\b.*delete|wbadmin delete)", "deletes Windows backups and shadow copies"),
    (r"^setx\b", "sets a Windows environment variable for good"), (r"^shutdown\b(?!.*/a\b)", "shuts Windows down"),
    (r"^sc (?:stop|delete|config|failure)\b", "stops, deletes or reconfigures a Windows service"),
    (r"^(?:winget|choco|scoop) (?:uninstall|remove|rm)\b", "uninstalls Windows programs"),
    (r"^wsl\b.*(?:--unregister|--shutdown|--terminate|--uninstall|(?:^|\s)-t\s)",
     "unregisters or stops WSL distributions (an unregistered one loses its files)"),
    (r"^mountvol\b.*/[dp]\b", "removes a Windows volume mount"),
    (r"^cipher\b.*/w", "wipes a Windows disk's free space"),
    (r"^(?:echo|type|copy)\b.*>\s*\S*\\start menu\\programs\\startup\\", "makes code run at Windows logon"),
)
# PowerShell statements, lowercased: (regex, what it does)
PS_CMDLETS = (
    (r"^(?:set|add)-mppreference\b.*-(?:disable|exclusion)", "turns Microsoft Defender off or excludes paths from it"),
    (r"^set-executionpolicy\b(?!.*-scope\s+(?:process|currentuser\s+-executionpolicy\s+remotesigned))",
     "changes PowerShell's execution policy beyond this process"),
    (r"^(?:set|new)-itemproperty\b.*\\(?:run|runonce|winlogon)\b", "makes a program start at logon (a Run key)"),
    (r"^(?:set|new)-itemproperty\b.*\\policies\\", "changes Windows policy through the registry"),
    (r"^new-netfirewallrule\b.*-action\s+allow\b.*-direction\s+inbound|^new-netfirewallrule\b.*-direction\s+inbound"
     r".*-action\s+allow", "opens a port in the Windows firewall"),
    (r"^(?:copy-item|cp|copy|move-item|mv)\b.*(?:\\|/)start menu(?:\\|/)programs(?:\\|/)startup",
     "makes code run at Windows logon"),
    (r"\[(?:system\.)?io\.(?:directory|file)\]::delete\s*\(", "deletes files through .NET"),
    (r"\[(?:system\.)?io\.file\]::(?:write|append)alltext\s*\(\s*['\"]?\$profile",
     "makes code run at every PowerShell start"),
    (r"^(?:register-scheduledtask|new-scheduledtask|set-scheduledtask|unregister-scheduledtask)\b",
     "schedules or removes a Windows task"), (r"^(?:new-service|remove-service)\b", "adds or removes a service"),
    (r"^(?:stop-process|spps|kill)\b(?!.*-id\b)(?!\s+\d)", "kills Windows processes by name"),
    (r"^(?:stop-computer|restart-computer)\b", "shuts Windows down"),
    (r"^(?:format-volume|clear-disk|initialize-disk|remove-partition|set-disk|remove-physicaldisk)\b",
     "formats or wipes a disk"), (r"^clear-recyclebin\b", "empties the recycle bin"),
    (r"^(?:new-localuser|remove-localuser|add-localgroupmember|disable-localuser|set-localuser)\b",
     "adds, removes or changes Windows users or groups"),
    (r"^(?:clear-eventlog|remove-eventlog|limit-eventlog)\b", "clears Windows event logs"),
    (r"^(?:set-netfirewallprofile\b.*-enabled\s+['\"]?\$?false|disable-netfirewallrule|remove-netfirewallrule)",
     "turns the Windows firewall off"),
    (r"^(?:stop-service|set-service\b.*disabled)", "stops or disables a Windows service"),
    (r"^(?:remove-item|ri|rm|del|erase|rd|rmdir|remove-itemproperty|rp)\b.*\b(?:hk(?:cu|lm|cr|u|cc)|registry::)",
     "deletes registry keys"),
    (r"^(?:add-content|set-content|out-file|ac)\b.*(?:\$profile|\\startup\\|/startup/)",
     "makes code run at every PowerShell start or logon"),
    (r"^(?:remove-appxpackage|uninstall-package|uninstall-module)\b", "uninstalls Windows programs"),
    (r"^(?:disable-computerrestore|remove-computerrestorepoint)\b", "removes Windows restore points"),
)
_WIN_TOOLS = tuple((re.compile(rx), why) for rx, why in WIN_TOOLS)
_PS_CMDLETS = tuple((re.compile(rx), why) for rx, why in PS_CMDLETS)
_DOWNLOAD_RUN = re.compile(r"(?i)(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|curl|wget)\b[^|;]*"
                           r"\|\s*(?:iex|invoke-expression)\b|(?:iex|invoke-expression)\s*\(+\s*(?:iwr|irm|invoke-"
                           r"webrequest|invoke-restmethod|new-object\s+net\.webclient)")
_URL = re.compile(r"https?://[^\s'\")]+")
_DELETE = frozenset({"remove-item", "ri", "rm", "del", "erase", "rd", "rmdir"})
_LISTS = frozenset({"get-childitem", "gci", "ls", "dir"})
_PS = frozenset({"powershell", "pwsh"})
_BARE = frozenset({"winget", "choco", "scoop", "wsl"})  # Windows programs WSL finds without .exe (its PATH)


def mark(facts: Facts, words: list[str], scripts: Mapping[str, str | None] | None = None) -> list[str]:
    """Raise `win-destroy` for a Windows tool that changes the Windows side; the shell commands its deletes,
    uploads and downloads come to. `scripts`: the files written earlier in the line (`pwsh -File x.ps1`)."""
    if not words:
        return []
    first = words[0].rsplit("/", 1)[-1].lower()
    base = re.sub(r"\.(?:exe|com)$", "", first)
    if base not in _PS and base != "cmd" and base not in _BARE and base == first:
        return []  # a Linux program (only powershell/pwsh run without .exe)
    texts: list[str] = []
    if base in _PS:
        script = _ps_script(words[1:]) or _ps_file(words[1:], scripts or {})
        why = _powershell(script, texts, windows_side=first != base or base == "powershell") if script else None
    elif base == "cmd":
        rest = next((words[i + 1:] for i, w in enumerate(words[1:], 1) if w.lower() in ("/c", "/k", "/r")), [])
        why = None
        for part in re.split(r"\s*(?<!\^)(?:&&|\|\||&|\|)\s*", " ".join(rest)) if rest else []:
            why = why or _tool(_split(part), texts)
    else:
        why = _tool([base, *words[1:]], texts)
    if why:
        facts.signals.add("win-destroy")
        facts.notes["win-destroy"] = f"why: {why}"
    return texts


def _ps_script(args: list[str]) -> str:
    for i, a in enumerate(args):
        low = a.lower()
        if low in ("-encodedcommand", "-enc", "-ec", "-e", "-en", "-encoded") and i + 1 < len(args):
            try:
                return base64.b64decode(args[i + 1]).decode("utf-16-le", "replace")
            except (binascii.Error, ValueError):
                return ""
        if low in ("-command", "-c", "-com", "-comm", "-co"):
            return " ".join(args[i + 1:])
        if low in ("-file", "-f"):
            return ""
    ops = [a for a in args if not a.startswith("-")]
    return " ".join(ops) if ops and ops[0][:1].isalpha() and "-" in ops[0] else ""


def _ps_file(args: list[str], scripts: Mapping[str, str | None]) -> str:
    """The text of a script run with -File, when it was written earlier in the same line."""
    name = next((args[i + 1] for i, a in enumerate(args[:-1]) if a.lower() in ("-file", "-f")), None)
    if name is None:
        return ""
    found = next((text for p, text in scripts.items() if text and p.endswith("/" + name.lstrip("./"))), None)
    return found or next((text for p, text in scripts.items() if text and name.startswith("/") and p == name), "")


def _split(text: str) -> list[str]:
    lex = shlex.shlex(text, posix=True)
    lex.whitespace_split, lex.escape, lex.commenters = True, "", ""
    try:
        return list(lex)
    except ValueError:
        return text.split()


def path(text: str, windows_side: bool = True) -> str:
    """A Windows path (or a variable naming one) as WSL sees it: C:\\Users\\dev -> /mnt/c/Users/dev."""
    for rx, value in _VARS:
        text = re.sub(rx, value, text)
    if windows_side:
        text = re.sub(r"^(?:~|\$HOME)(?=[\\/]|$)", PROFILE, text)
    if m := _DRIVE.match(text):
        text = f"/mnt/{m.group(1).lower()}/" + text[m.end():]
    return text.replace("\\", "/")


def _rm(paths: list[str], recursive: bool, texts: list[str]) -> None:
    if paths:
        texts.append(f"rm -f{'r' if recursive else ''} -- " + " ".join(shlex.quote(p) for p in paths))


def _tool(argv: list[str], texts: list[str]) -> str | None:
    """cmd.exe's own commands and Windows programs: deletes come to `rm`, the rest is read by the table."""
    if not argv:
        return None
    name = re.sub(r"\.(?:exe|com)$", "", argv[0].rsplit("\\", 1)[-1].rsplit("/", 1)[-1].lower())
    args = argv[1:]
    switches = {a.lower() for a in args if a.startswith("/")}
    operands = [path(a) for a in args if not a.startswith("/")]
    if name in ("rd", "rmdir", "del", "erase"):
        _rm(operands, bool(switches & {"/s"}), texts)
        return None
    if name == "robocopy" and switches & {"/mir", "/purge"} and len(operands) >= 2:
        _rm([operands[1].rstrip("/") + "/*"], True, texts)  # what the source lacks is deleted from the destination
        return None
    line = " ".join([name, *(a.lower() for a in args)])
    return next((why for rx, why in _WIN_TOOLS if rx.search(line)), None)


def _powershell(script: str, texts: list[str], windows_side: bool) -> str | None:
    if _DOWNLOAD_RUN.search(script) and (url := _URL.search(script)):
        texts.append(f"curl -s {shlex.quote(url.group(0))} | sh")  # iwr URL | iex: a download run as code
    found = None
    for statement in re.split(r"[;\n]|&&|\|\|", script):
        listed: str | None = None
        for stage in re.split(r"\|", statement):
            words = _split(stage.strip())
            if not words:
                continue
            low = " ".join(w.lower() for w in words)
            found = found or next((why for rx, why in _PS_CMDLETS if rx.search(low)), None)
            cmd = words[0].lower()
            named = _ps_paths(words[1:], windows_side)
            if cmd in _LISTS:
                listed = named[0] if named else None
            elif cmd in _DELETE and not re.search(r"\bhk(?:cu|lm|cr|u|cc):|registry::", low):
                recursive = any(w.lower() in ("-recurse", "-r", "-rec") for w in words)
                _rm(named or ([listed.rstrip("/") + "/*"] if listed else []), recursive or bool(listed), texts)
            elif cmd in ("invoke-webrequest", "iwr", "invoke-restmethod", "irm") and (
                    src := _option(words, "-infile")):
                url = _URL.search(stage)
                dest = url.group(0) if url else "http://unknown"
                texts.append(f"curl -T {shlex.quote(path(src, windows_side))} {shlex.quote(dest)}")
    return found


def _option(words: list[str], name: str) -> str | None:
    for i, w in enumerate(words[:-1]):
        if w.lower() == name:
            return words[i + 1]
    return None


_TAKES_VALUE = frozenset({"-filter", "-include", "-exclude", "-erroraction", "-ea", "-depth", "-name", "-credential",
                          "-stream", "-value", "-encoding", "-scope", "-executionpolicy", "-method", "-uri",
                          "-infile", "-outfile", "-headers", "-body", "-contenttype"})


def _ps_paths(args: list[str], windows_side: bool) -> list[str]:
    """The paths a cmdlet names: -Path/-LiteralPath values and positional words, split at commas."""
    out: list[str] = []
    skip = False
    for a in args:
        low = a.lower()
        if skip:
            skip = False
            continue
        if low in _TAKES_VALUE:
            skip = True
            continue
        if a.startswith("-") and low not in ("-path", "-literalpath", "-lp"):
            continue
        if low in ("-path", "-literalpath", "-lp"):
            continue
        out += [path(p.strip(), windows_side) for p in a.split(",") if p.strip()]
    return out


_READERS = frozenset({"get-content", "gc", "cat", "type"})


def reads(prog: str, words: list[str]) -> list[str]:
    """The files a PowerShell or cmd.exe command prints (`Get-Content $env:APPDATA\\NuGet\\NuGet.Config`), as WSL
    sees them: what flows out of it into a pipe."""
    base = re.sub(r"\.(?:exe|com)$", "", prog.lower())
    if base in _PS:
        script = _ps_script(words)
    elif base == "cmd":
        script = " ".join(next((words[i + 1:] for i, w in enumerate(words) if w.lower() in ("/c", "/k")), []))
    else:
        return []
    out: list[str] = []
    for stage in re.split(r"[;|\n&]", script):
        parts = _split(stage.strip())
        if parts and parts[0].lower() in _READERS:
            out += _ps_paths(parts[1:], prog.lower() != "pwsh")
    return out
