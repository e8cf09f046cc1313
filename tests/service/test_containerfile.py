"""The Containerfile the Kubernetes manifests' image is built from, parsed: FROM first, every base image and tool
pinned (no `latest`), and the agent CLIs at exactly the versions dun is tested against (dun/agents/versions.py)."""

from __future__ import annotations

import re
from pathlib import Path

from dun.agents.versions import TESTED

CONTAINERFILE = Path(__file__).resolve().parents[2] / "Containerfile"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, `\\` continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        out.append((word.upper(), " ".join(rest.split())))
    assert not pending, "a continuation runs off the end of the file"
    return out


def test_from_first_and_pinned() -> None:
    steps = instructions(CONTAINERFILE.read_text(encoding="utf-8"))
    assert steps[0][0] == "FROM"
    for word, args in steps:
        if word == "FROM":
            image = args.split()[0]
            assert re.search(r":\d+\.\d+\.\d+[-\w.]*$", image), f"{image}: the base image needs a full version tag"
    text = " ".join(args for _, args in steps)
    assert not re.search(r"(:|@)latest\b", text)


def test_the_agent_clis_are_dun_s_pins() -> None:
    text = " ".join(args for word, args in instructions(CONTAINERFILE.read_text(encoding="utf-8")) if word == "RUN")
    for name, pin in TESTED.items():
        wanted = f"{pin.package}@{pin.version}" if pin.installer == "npm" else f"{pin.package}=={pin.version}"
        assert wanted in text.split(), f"{name}: the Containerfile does not install {wanted}"
    npm = re.findall(r"(@?[\w./-]+)@([\w.-]+)", text)
    assert {package for package, _ in npm} <= {pin.package for pin in TESTED.values()} | {"npm"}
    assert "dun[fleet,notify]" in text and "git" in text.split()


def test_the_parser_sees_continuations() -> None:
    assert instructions("# c\nFROM a:1.2.3\nRUN x \\\n  y\n") == [("FROM", "a:1.2.3"), ("RUN", "x y")]
