"""The programs that only run another program, as data: each one's options (those that take a value), so that the
command after them is found (`sudo -u dev CMD`, `nice -n 10 CMD`, `pkexec CMD`, `systemd-run --scope CMD`)."""

from __future__ import annotations

from dun.guard.options import Spec


def _long(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, Spec] = {
    "sudo": Spec("ugpCDhrtTU", _long("--user", "--group", "--prompt", "--chdir", "--host", "--role", "--type",
                                      "--other-user", "--close-from", "--command-timeout"), stop=True),
    "doas": Spec("uC", stop=True),
    "shx": Spec(stop=True),  # npx shx rm -rf x: shelljs's commands
    "coproc": Spec(stop=True),  # coproc CMD: CMD, in the background
    "sshpass": Spec("pfde", stop=True),  # sshpass -p PW ssh host CMD
    "nohup": Spec(stop=True), "setsid": Spec(stop=True), "unbuffer": Spec(stop=True), "builtin": Spec(stop=True),
    "busybox": Spec(stop=True), "chronic": Spec(stop=True), "torsocks": Spec(stop=True), "exec": Spec("a", stop=True),
    "caffeinate": Spec("tw", stop=True), "stdbuf": Spec("ioe", stop=True), "nice": Spec("n", stop=True),
    "ionice": Spec("cnp", stop=True), "time": Spec("fo", _long("--format", "--output"), stop=True),
    "taskset": Spec(stop=True), "strace": Spec("eoOpsSuUP", stop=True), "ltrace": Spec("eouns", stop=True),
    "npx": Spec("p", _long("--package"), stop=True), "bunx": Spec("p", _long("--package"), stop=True),
    "uvx": Spec(long=_long("--from", "--with", "--python"), stop=True),
    "systemd-cat": Spec("tp", _long("--identifier", "--priority"), stop=True),
    "unshare": Spec("S", _long("--setuid", "--setgid", "--propagation", "--setgroups", "--wd", "--root",
                               "--map-user", "--map-group"), stop=True),
    "nsenter": Spec("tSGrwT", _long("--target", "--setuid", "--setgid", "--root", "--wd"), stop=True),
    "xvfb-run": Spec("nsef", _long("--server-num", "--server-args", "--error-file", "--auth-file"), stop=True),
    "fakeroot": Spec("ils", stop=True), "proxychains": Spec("f", stop=True), "proxychains4": Spec("f", stop=True),
    "firejail": Spec(stop=True), "catchsegv": Spec(stop=True), "faketime": Spec("f", stop=True),
    "chrt": Spec(stop=True), "prlimit": Spec("p", stop=True), "cgexec": Spec("g", stop=True),
    "runuser": Spec("ugGl", _long("--user", "--group", "--supp-group", "--login"), stop=True),
    "screen": Spec("SceptTLh", stop=True), "dotenv": Spec("ecv", stop=True),
    "pkexec": Spec(long=_long("--user"), stop=True), "toybox": Spec(stop=True), "host-spawn": Spec(stop=True),
    "run0": Spec("uDg", _long("--user", "--unit", "--property", "--slice", "--setenv", "--chdir", "--description",
                              "--group", "--nice", "--machine"), stop=True),
    "flatpak-spawn": Spec(long=_long("--directory", "--env", "--forward-fd"), stop=True),
    "distrobox-host-exec": Spec(stop=True), "entr": Spec(stop=True), "valgrind": Spec(stop=True),
    "numactl": Spec("CNmlip", stop=True), "setpriv": Spec(stop=True), "systemd-inhibit": Spec(stop=True),
    "chpst": Spec("ugUeln", stop=True), "nocache": Spec(stop=True), "ccache": Spec(stop=True),
    "with-contenv": Spec(stop=True), "tini": Spec(stop=True), "dumb-init": Spec(stop=True),
}
SYSTEMD_SCOPE = Spec("puEM", _long("--unit", "--property", "--slice", "--description", "--setenv",
                                    "--working-directory", "--uid", "--gid", "--nice", "--machine"), stop=True)
