"""Whether an agent CLI's credentials look configured: which key variables are set and which login or config files
exist. Names only: a secret's value is never read into anything printed."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# Variables any of several CLIs take a provider key from (opencode, pi and aider talk to many providers).
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
                 "GROQ_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY", "XAI_API_KEY", "AZURE_OPENAI_API_KEY")


@dataclass
class Auth:
    configured: bool
    found: list[str] = field(default_factory=list)  # variable names and file paths, never values
    hint: str = ""  # how to configure it, when nothing is found

    def to_dict(self) -> dict[str, object]:
        return {"configured": self.configured, "found": self.found, "hint": self.hint}


def _home(env: dict[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _xdg(env: dict[str, str], var: str, default: str) -> Path:
    return Path(env.get(var) or _home(env) / default)


def _codex_key(env: dict[str, str], codex_home: Path) -> list[str]:
    """The key variable a custom model provider in $CODEX_HOME/config.toml names (`env_key`), when it is set."""
    try:
        config = tomllib.loads((codex_home / "config.toml").read_text("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    provider = (config.get("model_providers") or {}).get(config.get("model_provider") or "")
    key = provider.get("env_key") if isinstance(provider, dict) else None
    return [key] if isinstance(key, str) and env.get(key) else []


def _gemini_auth_type(settings: Path) -> str | None:
    try:
        data = json.loads(settings.read_text("utf-8"))
        return str(data["security"]["auth"]["selectedType"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def auth_status(name: str, env: dict[str, str] | None = None) -> Auth:
    env = dict(os.environ if env is None else env)
    home = _home(env)
    keys: tuple[str, ...] = PROVIDER_KEYS
    files: list[Path] = []
    hint = ""
    extra: list[str] = []
    if name == "claude":
        keys = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
        config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        files = [config_dir / ".credentials.json"]
        hint = "run `claude` once and /login, or set ANTHROPIC_API_KEY"
    elif name == "codex":
        codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
        keys = ("OPENAI_API_KEY", "CODEX_API_KEY")
        files = [codex_home / "auth.json"]
        extra = _codex_key(env, codex_home)
        hint = "run `codex login`, or set OPENAI_API_KEY"
    elif name == "gemini":
        keys = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS")
        files = [home / ".gemini" / "oauth_creds.json"]
        selected = _gemini_auth_type(home / ".gemini" / "settings.json")
        if selected:
            extra = [f"security.auth.selectedType: {selected} in ~/.gemini/settings.json"]
        hint = "set GEMINI_API_KEY and security.auth.selectedType in ~/.gemini/settings.json"
    elif name == "opencode":
        files = [_xdg(env, "XDG_DATA_HOME", ".local/share") / "opencode" / "auth.json"]
        if env.get("OPENCODE_CONFIG"):
            files.append(Path(env["OPENCODE_CONFIG"]))
        hint = "run `opencode auth login`, or set a provider key (e.g. ANTHROPIC_API_KEY)"
    elif name == "pi":
        agent_dir = Path(env.get("PI_CODING_AGENT_DIR") or home / ".pi" / "agent")
        files = [agent_dir / "auth.json", agent_dir / "models.json"]
        hint = "run `pi` once and /login, or set a provider key (e.g. ANTHROPIC_API_KEY)"
    elif name == "aider":
        files = [home / ".aider.conf.yml", home / ".env"]
        hint = "set a provider key (e.g. OPENAI_API_KEY), or api-key in ~/.aider.conf.yml"
    found = [k for k in keys if env.get(k)] + extra + [str(f) for f in files if f.is_file()]
    return Auth(bool(found), found, "" if found else hint)
