"""What interpreter code can do, as data: the calls that run shell commands, delete, write or chmod files, or
evaluate code, in Python, Perl, Ruby, JavaScript (node, deno, bun), PHP, Lua, R, awk, AppleScript and PowerShell,
and the expressions that stand for the home directory or the working directory.

The patterns are deliberately language-blind where the languages agree (`system(`), so a call written in one
language's style inside another's one-liner is still seen."""

from __future__ import annotations

import re

# Calls whose arguments are a shell command or an argv (their string literals are analysed as shell).
EXEC_CALLS = re.compile(r"""
    \bos\.(?:system|popen|exec\w*|spawn\w*|posix_spawnp?|startfile)\s*\(
  | \bsubprocess\.\w+\s*\( | \b(?:commands\.getoutput|pty\.spawn|asyncio\.create_subprocess_\w+)\s*\(
  | \b(?:system|exec|execSync|execFile|execFileSync|spawn|spawnSync|shell_exec|passthru|proc_open|popen|pcntl_exec)
    \s*[(\s'"]
  | \bchild_process\b | \b(?:IO\.popen|Open3\.\w+|Kernel\.(?:system|exec|spawn)|Process\.spawn)\b
  | \bos\.execute\s*\( | \bio\.popen\s*\( | \bdo\s+shell\s+script\b | \bRuntime\.getRuntime\b
  | \bDeno\.(?:run|Command)\b | \bBun\.(?:spawn\w*|\$) | \bexeca(?:Sync|Command\w*|Node)?\s*\(
  | (?<![\w.])\$(?=\s*[`\x00]) | \bInvoke-Expression\b | \bStart-Process\b
  | \bsystem2?\s*\( | \bshell\s*\( | \|\s*getline | \bprint\s*\|
  | \bsession\.run(?:_always|_install)?\s*\( | (?<![\w.])sh\s*[(\s]
  | \bgetattr\s*\(\s*\w+\s*,\s*\x00\d+\x00\s*\)\s*\(
  | \bCommand::new\s*\( | \bexec\.Command(?:Context)?\s*\( | \bProcessBuilder\s*\( | \bSystem\.(?:cmd|shell)\s*\(
  | \brun\s*\(\s*\x00\d+\x00\s*\)
""", re.X)
# Calls that delete (argument 0), with whether they delete whole trees.
DELETE_CALLS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(r"\b(?:rmtree|rm_rf|rm_r|remove_tree|remove_dir|remove_dir_all|RemoveAll|rmSync|removeSync|rimraf"
                r"|deleteRecursively|deleteSync|rimrafSync|emptyDirSync|emptyDir|unlink\s*\(\s*[^)]*"
                r"recursive\s*=\s*TRUE)\b|\brecursive\s*:\s*true|\brm\s*\([^)]*recursive\s*=\s*true"), True),
    (re.compile(r"\b(?:os\.(?:remove|unlink|rmdir|removedirs)|unlinkSync|unlink|rmdirSync|rmdir|fs\.rm|fs\.promises"
                r"\.rm|File\.delete|FileUtils\.rm\w*|FileUtils\.remove\w*|Dir\.(?:rmdir|delete|unlink)|os\.remove"
                r"|file\.remove|Remove-Item|Deno\.remove|shutil\.move|os\.rename|os\.replace|FileUtils\.mv|renameSync|rename"
                r"|fsp\.rm|remove_file|os\.Remove"
                r"|promises\.rm)\b|\)\.rm(?=\s*\()|\b(?:sh|shell|shelljs)\.rm(?=\s*\()"
                r"|(?<![\w.])remove(?=\s*\()|(?<![\w.$])rm(?=\s*\()"), False),
)
# Calls that write (the argument index that names the file).
OPEN_CALLS = re.compile(r"(?:(?<![\w.])(?:open|fopen|io\.open|File\.open|file)"  # (path, mode)
                        r"|\b(?:zipfile\.ZipFile|ZipFile|tarfile\.open|gzip\.open|bz2\.open|lzma\.open|codecs\.open))\s*\(")
WRITE_CALLS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|file_put_contents"
                r"|File\.write|IO\.write|File\.binwrite|FileUtils\.touch|FileUtils\.mkdir_p|mkdirSync|os\.makedirs"
                r"|os\.mkdir|Deno\.writeTextFile\w*|Deno\.writeFile\w*|Bun\.write|Set-Content|Out-File"
                r"|Add-Content|touch|chmod|os\.chmod|chmodSync|File\.chmod|os\.chown|chown|lchown|truncate"
                r"|fs::write|File::create|OpenOptions::new|os\.WriteFile|os\.Create|ioutil\.WriteFile"
                r"|os\.open(?=\s*\([^)]*O_(?:WRONLY|RDWR|TRUNC|APPEND|CREAT)))\b\s*\(?"), 0),
    (re.compile(r"\b(?:shutil\.(?:copy\w*|move)|os\.(?:rename|replace|symlink|link)|copyFile|copyFileSync"
                r"|renameSync|symlinkSync|FileUtils\.(?:cp\w*|mv|ln\w*|copy\w*)|copy|rename|symlink|writeLines)"
                r"\b\s*\("), 1),
)
# Methods on a path object: the receiver is the file.
PATH_METHODS = re.compile(r"\.(write_text|write_bytes|touch|mkdir|chmod|symlink_to|hardlink_to|unlink|rmdir|rename"
                          r"|replace)\s*\(")
PATH_DELETES = frozenset({"unlink", "rmdir", "rename", "replace"})  # rename/replace move the receiver away
# Code evaluated at run time from something decoded, reversed or read: the code the guard would have to see.
EVAL_CALLS = re.compile(r"(?<![\w.])(?:exec|eval|compile|Function|instance_eval|class_eval|module_eval"
                        r"|Invoke-Expression|iex|create_function|loadstring)\s*[(\s'\"]")
DECODERS = re.compile(r"b64decode|b32decode|b16decode|a85decode|base64|decode64|decode_base64|fromhex|unhexlify"
                      r"|rot.?13|codecs\.decode|zlib|gzip|bz2|lzma|marshal|decompress|gzinflate|gzuncompress"
                      r"|str_rot13|strrev|unpack|\bpack\s*\(|atob|Buffer\.from|fromCharCode|\bchr\s*\(|\[::-1\]"
                      r"|\.reverse\b|\bbytes\s*\(\s*\[|\bbytearray\s*\(|\\x[0-9a-fA-F]{2}|sys\.stdin|\binput\s*\(|STDIN|readline|urlopen|requests\."
                      r"|\.read\(\)|read_text|readFileSync|File\.read|file_get_contents|\bslurp\b"
                      r"|\bfetch\s*\(|-EncodedCommand|FromBase64String", re.I)
# The home directory (replaced by '~'), the working directory ('.'), script parameters (their values).
HOME_IDIOMS = re.compile(r"""
    \bos\.path\.expanduser\(\s*(['"])~\1\s*\) | \b(?:pathlib\.)?Path\.home\(\) | \bos\.homedir\(\)
  | \bos\.environ\[\s*(['"])HOME\2\s*\] | \bos\.environ\.get\(\s*(['"])HOME\3\s*\) | \bos\.getenv\(\s*(['"])HOME\4\s*\)
  | \bprocess\.env\.HOME\b | \bprocess\.env\[\s*(['"])HOME\5\s*\] | \$ENV\{\s*['"]?HOME['"]?\s*\}
  | \bENV\[\s*(['"])HOME\6\s*\] | \bDir\.home\b | \bgetenv\(\s*(['"])HOME\7\s*\)
  | \bDeno\.env\.get\(\s*(['"])HOME\8\s*\)
  | \bSys\.getenv\(\s*(['"])HOME\9\s*\) | \bos\.getenv\(\s*"HOME"\s*\) | \brequire\(\s*['"]os['"]\s*\)\.homedir\(\)
  | \bFile\.expand_path\(\s*(['"])~\10\s*\) | \$env:USERPROFILE | \$env:HOME
  | \$_(?:SERVER|ENV)\[\s*['"]HOME['"]\s*\] | (?<![\w.])homedir\(\) | \bos\.Getenv\(\s*"HOME"\s*\)
  | \bos\.UserHomeDir\(\)
  | \b(?:std::)?env::var\(\s*"HOME"\s*\)(?:\.unwrap\(\))? | \b(?:dirs|home)::home_dir\(\)(?:\.unwrap\(\))?
  | \bpath\.expand\(\s*(['"])~\11\s*\)
""", re.X)
# Code that publishes what it builds: R's devtools release and CRAN submission, Julia's package registration
PUBLISH_CODE = re.compile(r"\bdevtools::(?:release|submit_cran)\s*\(|\b(?:release|submit_cran)\s*\(\s*\)"
                          r"|\bRegistrator\b[^\n]*\bregister\s*\(|\bLocalRegistry\b[^\n]*\bregister\s*\("
                          r"|\bPkg\.register\s*\(|\btwine\.commands\.upload\b|\bpublish_package\s*\(")
CWD_IDIOMS = re.compile(r"\bos\.getcwd\(\)|\bprocess\.cwd\(\)|\bDir\.pwd\b|\bgetcwd\(\)|\bDeno\.cwd\(\)|"
                        r"\bPath\.cwd\(\)|\bgetwd\(\)")
SITE_IDIOMS = re.compile(r"\bsite\.(?:getusersitepackages\(\)|USER_SITE|getsitepackages\(\)\[\s*-?\d+\s*\])"
                         r"|\bsysconfig\.get_paths\(\)\[\s*['\"](?:purelib|platlib)['\"]\s*\]")
ARGV = re.compile(r"\bsys\.argv\[(\d+)\]|\bprocess\.argv\[(\d+)\]|\$ARGV\[(\d+)\]|\bARGV\[(\d+)\]|"
                  r"\$argv\[(\d+)\]|\bDeno\.args\[(\d+)\]")
ARGV_BASE = (0, -1, 1, 1, 0, 1)  # what index 0 of each form above means: sys.argv[1] is the first parameter
# Wrappers that only pass a path through: Path('x'), os.path.expanduser('x'), File.expand_path('x').
PASS_THROUGH = re.compile(r"\b(?:(?:pathlib\.)?(?:Pure)?(?:Posix)?Path"
                          r"|os\.path\.(?:expanduser|abspath|realpath|normpath)|File\.expand_path|Pathname\.new|path\.resolve|String|str|glob\.glob|glob|Dir\.glob"
                          r"|normalizePath|path\.expand)")  # \b before each: not rglob, substr
JOIN_CALLS = re.compile(r"\b(?:os\.path\.join|path\.join|path\.resolve|File\.join|file\.path|Join-Path|joinpath"
                        r"|catfile)|\brequire\(\x00\d+\x00\)\.(?:join|resolve)")
# With subprocess imported under another name (import subprocess as s), its calls by their own names.
SUBPROCESS_CALLS = re.compile(r"(?<![\w])(?:\w+\.)?(?:check_call|check_output|getoutput|getstatusoutput|Popen|call|run)"
                              r"\s*\(")

# Calls that destroy what a remote service holds, through its SDK: boto3's delete_bucket/terminate_instances, the
# Kubernetes client's delete_namespace, deleteBucket, AWS SDK v3's DeleteBucketCommand, redis flushall; not one row,
# key, item or file (delete_one, deleteById, remove_file: the file rules judge files)
DESTROY_CODE = re.compile(r"\b(?:delete|terminate|destroy|purge|drop|deregister|deprovision)_(?!(?:one|by_\w+|key|item"
                          r"|file|files|dir\w*|line|row|entry|message|cookie|session|local|tmp|temp|cache|duplicates|na"
                          r"|level|index|columns)\b)[a-z_]+\s*\("
                          r"|\b(?:delete|terminate|destroy|purge|drop|deregister)(?!One|ById|By[A-Z]|Key|Item|File|Row"
                          r"|Entry|Message|Cookie|Session|Local|Temp|Cache|Many|Duplicates)[A-Z]\w*\s*\("
                          r"|\bnew\s+(?:Delete|Terminate|Destroy|Purge|Drop)\w*Command\s*\(|\bflush_?(?:all|db)\s*\("
                          r"|\bflush(?:All|Db)\s*\(|\.get_repo\([^)]*\)\.delete\s*\(|\.bucket\([^)]*\)\.delete\s*\(")
