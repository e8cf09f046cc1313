"""Secrets an agent prints, or a user puts in the agent's command line, never reach a file dun writes, its messages
or the next prompt; dun's records are private (0600 files, 0700 directories)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from fake_agent import FAKE_COMMAND, block, calls, write_scenario
from loop_support import make_repo, work
from robust_support import dun

SECRETS = {
    "anthropic": "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4,
    "openai": "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3" * 2,
    "github classic": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github oauth": "gho_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github fine-grained": "github_pat_11ABCDEFG0" + "x" * 60,
    "aws access key": "AKIAIOSFODNN7EXAMPLE",
    "aws secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private key body": "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
    "custom pattern": "CORP-314159",
}
PRINTED = "\n".join([
    f"I used {SECRETS['anthropic']} and {SECRETS['openai']} to test.",
    f"git remote set-url origin https://x:{SECRETS['github classic']}@example.invalid/r.git",
    f"GH_TOKEN={SECRETS['github oauth']} and {SECRETS['github fine-grained']}",
    f"aws_access_key_id = {SECRETS['aws access key']}",
    f"aws_secret_access_key = {SECRETS['aws secret']}",
    f"GOOGLE_API_KEY={SECRETS['google']} SLACK={SECRETS['slack']}",
    f"curl -H 'Authorization: Bearer {SECRETS['bearer']}'",
    "-----BEGIN RSA PRIVATE KEY-----", SECRETS["private key body"], "-----END RSA PRIVATE KEY-----",
    f"ticket {SECRETS['custom pattern']}",
])
PRIVATE_FILES = {".out", ".err"}  # the agent's own output, kept as it was printed: private, not redacted


@pytest.fixture
def leaky_run(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Path]:
    make_repo(repo, boxes=("alpha", "beta"), agent={
        "command": [*FAKE_COMMAND, f"--token={SECRETS['github classic']}"],
        "extra_args": ["--api-key", SECRETS["anthropic"], f"OPENAI_API_KEY={SECRETS['openai']}"]})
    (repo / ".dun" / "config.yaml").write_text(json.dumps({
        **json.loads((repo / ".dun" / "config.yaml").read_text()), "secrets": {"patterns": [r"CORP-[0-9]{6}"]}}))
    leaky = work("alpha", text=PRINTED, stderr=PRINTED,
                 status=block(task="alpha", next=f"rotate {SECRETS['slack']} and {SECRETS['aws access key']}"))
    sc = write_scenario(tmp_path / "sc", [leaky, work("beta", exit=True)])
    monkeypatch.setenv("DUN_FAKE_SCENARIO", str(sc))
    done = dun(repo, "loop")
    assert done.returncode == 0, done.stderr
    assert len(calls(sc)) == 2
    return repo, done.stderr, sc


def test_no_secret_reaches_a_file_dun_writes_its_messages_or_the_prompt(leaky_run: tuple[Path, str, Path]) -> None:
    repo, stderr, _ = leaky_run
    written = [p for p in (repo / ".dun").rglob("*") if p.is_file() and p.suffix not in PRIVATE_FILES
               and p.name != "config.yaml"]  # the one file here the user wrote
    assert any(p.name == "iteration-2.prompt.md" for p in written) and any(p.name == "REPORT.md" for p in written)
    for path in written:
        data = path.read_bytes()
        for kind, secret in SECRETS.items():
            assert secret.encode() not in data, f"{kind} in {path.relative_to(repo)}"
    for kind, secret in SECRETS.items():
        assert secret not in stderr, kind
    # the prompt file is what the agent read on its stdin
    handoff = (repo / ".dun" / "logs" / "iteration-2.prompt.md").read_text(encoding="utf-8")
    assert "<redacted:slack-token>" in handoff  # the previous answer's recommendation, redacted in place
    argv = json.loads((repo / ".dun" / "logs" / "iteration-1.json").read_text())["argv"]
    assert "--api-key" in argv and "<redacted:argument>" in argv


def test_the_raw_output_and_every_record_are_private(leaky_run: tuple[Path, str, Path]) -> None:
    repo = leaky_run[0]
    for path in [repo / ".dun" / "logs", *(repo / ".dun" / "logs").iterdir(), repo / ".dun" / "state.json",
                 repo / ".dun" / "handoff.json", repo / ".dun" / "REPORT.md"]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), f"{path.name}: {oct(mode)}"
    assert SECRETS["aws secret"].encode() in (repo / ".dun" / "logs" / "iteration-1.err").read_bytes()
