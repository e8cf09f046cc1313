"""How to run each pinned agent CLI headless and fully offline against a scripted server in agent_servers.py: where the
binary is, which private HOME files and environment it needs, and its command line. Shared by test_agent_clis.py and
capture_agent_corpus.py. The versions come from dun/agents/versions.py, the one place they are pinned.

Every run gets a private HOME (a real one's shell rc files can stall a login shell and its config would leak in),
stdin closed, TERM=dumb, and an environment stripped of inherited variables that steer a CLI elsewhere."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dun.agents.versions import TESTED

from .agent_servers import AgentServer, ChatServer, GeminiServer, ResponsesServer

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("DUN_E2E_CACHE", HERE / ".cache"))
VERSIONS: dict[str, dict[str, str]] = {name: asdict(pin) for name, pin in TESTED.items()}
MODEL = "scripted-model"
API_KEY = "dummy-key"
# Inherited variables that would point a CLI at another endpoint, key, config dir or proxy.
STRIPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "OPENCODE",
                     "AIDER_", "PI_", "LITELLM_", "AZURE_", "OPENROUTER_")
STRIPPED_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
# Prices the servers' usage is billed at where a CLI takes prices from config (aider, opencode, pi): USD per
# million tokens. Codex and Gemini never print dollars.
PRICE_IN_PER_MTOK, PRICE_OUT_PER_MTOK = 2.0, 8.0


# --- the one-box mission every CLI is driven through -------------------------------------------------------------

MISSION = "# Mission\n\n- [ ] x\n"
TICKED = "# Mission\n\n- [x] x\n"
PROMPT = "Tick the box `x` in MISSION.md, commit it with git, and end with a DUN status block."
TICK_COMMAND = "sed -i 's/^- \\[ \\] x$/- [x] x/' MISSION.md && git add MISSION.md && git commit -q -m 'Tick box x'"
STATUS_BLOCK = ("---DUN_STATUS---\n"
                "STATUS: COMPLETE\n"
                "TASKS_COMPLETED_THIS_LOOP: 1\n"
                "FILES_MODIFIED: 1\n"
                "TESTS_STATUS: PASSING\n"
                "WORK_TYPE: IMPLEMENTATION\n"
                "EXIT_SIGNAL: true\n"
                "RECOMMENDATION: done\n"
                "---END_DUN_STATUS---")
FINAL_TEXT = f"Ticked box x in MISSION.md and committed it.\n\n{STATUS_BLOCK}"
# aider does not run shell commands under --yes: it edits with a SEARCH/REPLACE block and commits by itself
AIDER_EDIT = "MISSION.md\n```\n<<<<<<< SEARCH\n- [ ] x\n=======\n- [x] x\n>>>>>>> REPLACE\n```"
TOOL_USAGE = {"input_tokens": 1000, "output_tokens": 50}
FINAL_USAGE = {"input_tokens": 1200, "output_tokens": 100}
GITIGNORE_TEMPLATE = HERE.parents[1] / "templates" / "dun.gitignore"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}).stdout


def make_repo(root: Path) -> Path:
    """A git repository with an unticked MISSION.md and dun's .dun/.gitignore, all committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / "MISSION.md").write_text(MISSION, encoding="utf-8")
    (root / ".dun").mkdir(exist_ok=True)
    (root / ".dun" / ".gitignore").write_text(GITIGNORE_TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def success_scenario(cli: str) -> list[list[dict[str, Any]]]:
    """One episode: the shell step that ticks and commits, then the final answer (aider: one edit answer)."""
    if cli == "aider":
        return [[{"text": f"Ticking box x.\n\n{AIDER_EDIT}\n\n{STATUS_BLOCK}", "usage": FINAL_USAGE}]]
    return [[{"shell": TICK_COMMAND, "usage": TOOL_USAGE}, {"text": FINAL_TEXT, "usage": FINAL_USAGE}]]


def error_scenario(status: int) -> list[list[dict[str, Any]]]:
    """Every request of the episode gets this HTTP error (retry-after 0 where a CLI honours it)."""
    if status == 429:
        return [[{"error": {"status": 429, "message": "Rate limit reached for requests. Please try again in 20s.",
                            "retry_after": 0}}]]
    return [[{"error": {"status": status, "message": "Incorrect API key provided: dummy-key."}}]]


def version(name: str) -> str:
    return VERSIONS[name]["version"]


def install_dir(name: str) -> Path:
    return CACHE / f"{name}-{version(name)}"


def binary(name: str) -> Path:
    """The pinned binary; DUN_E2E_<NAME>_BIN points at another build."""
    override = os.environ.get(f"DUN_E2E_{name.upper()}_BIN")
    return Path(override) if override else install_dir(name) / VERSIONS[name]["bin"]


GIT_IDENTITY = {"GIT_AUTHOR_NAME": "dun-e2e", "GIT_AUTHOR_EMAIL": "e2e@dun.invalid",
                "GIT_COMMITTER_NAME": "dun-e2e", "GIT_COMMITTER_EMAIL": "e2e@dun.invalid"}


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_PREFIXES) and k not in STRIPPED_NAMES}
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"), "XDG_CACHE_HOME": str(home / ".cache"),
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "TERM": "dumb", "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        # The Gemini CLI runs shell commands with GIT_CONFIG_GLOBAL=/dev/null, so ~/.gitconfig's identity is not
        # seen there: the agents' commits need it from the environment (or the repository's own config).
        **GIT_IDENTITY,
        # a private temp dir: Codex refuses to put its helper binaries (the sandbox launcher) under the temp dir,
        # and the Gemini CLI writes error reports there
        "TMPDIR": str(home / "tmp"),
    })
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def write_gitconfig(home: Path) -> None:
    """A committer identity in the private HOME: the agents commit (aider checks `git config user.name`)."""
    (home / ".gitconfig").write_text("[user]\n\tname = dun-e2e\n\temail = e2e@dun.invalid\n", encoding="utf-8")


@dataclass
class Setup:
    """One prepared run: argv and environment (config files are already written under HOME)."""

    argv: list[str]
    env: dict[str, str]
    files: dict[str, Path] = field(default_factory=dict)  # config files written, by role


@dataclass
class Run:
    cli: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass(frozen=True)
class Cli:
    name: str
    server: type[AgentServer]
    setup: Callable[..., Setup]  # (home, repo, server, prompt, **options) -> Setup

    @property
    def version(self) -> str:
        return version(self.name)

    @property
    def binary(self) -> Path:
        return binary(self.name)

    def installed(self) -> str | None:
        """None when the pinned binary runs, else why not (asked once per process: --version takes seconds)."""
        return _installed(self.name, str(self.binary))

    def run(self, home: Path, repo: Path, server: AgentServer, prompt: str, timeout: float = 120,
            **options: Any) -> Run:
        home.mkdir(parents=True, exist_ok=True)
        write_gitconfig(home)
        setup = self.setup(home, repo, server, prompt, **options)
        started = time.monotonic()
        # PWD too: opencode takes its project directory from $PWD, not from the process's working directory
        proc = subprocess.run(setup.argv, cwd=repo, env={**setup.env, "PWD": str(repo)}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        return Run(self.name, setup.argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


@functools.cache
def _installed(name: str, binary_path: str) -> str | None:
    path = Path(binary_path)
    if not path.exists():
        return f"{name} {version(name)} is not installed: run `bash tests/e2e/install_agents.sh {name}`"
    try:
        # a HOME of its own, as install_agents.sh uses: some CLIs write config on their first start
        home = install_dir(name) / ".home"
        home.mkdir(parents=True, exist_ok=True)
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL, env={**os.environ, "HOME": str(home)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} does not run: {exc}"
    text = out.stdout + out.stderr
    if out.returncode != 0:
        return f"{path} --version failed: {text.strip()[:300]}"
    if f"DUN_E2E_{name.upper()}_BIN" not in os.environ and version(name) not in text:
        return f"{path} is {text.strip()!r}, not the pinned {version(name)}: rerun install_agents.sh"
    return None


# --- codex -----------------------------------------------------------------------------------------------------------


def setup_codex(home: Path, repo: Path, server: AgentServer, prompt: str, *, sandbox: bool = False,
                git_writable: bool = True, model: str | None = None) -> Setup:
    """``codex exec --json``. OPENAI_BASE_URL is ignored by 0.169.0: the endpoint is a model provider in
    $CODEX_HOME/config.toml. ``model`` None keeps Codex's own default model (which works in code mode: a JavaScript
    ``exec`` tool instead of ``exec_command``)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = []
    if model:
        lines.append(f'model = "{model}"')
    lines += [
        'model_provider = "scripted"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.scripted]",
        'name = "scripted"',
        f'base_url = "{server.base_url}"',
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        "request_max_retries = 0",  # a scripted error fails at once instead of after backoff
        "stream_max_retries = 0",
        "",
        "[analytics]",
        "enabled = false",
        "",
    ]
    config = codex_home / "config.toml"
    config.write_text("\n".join(lines), encoding="utf-8")
    env = base_env(home)
    env.update({"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": API_KEY})
    argv = [str(binary("codex")), "exec", "--json", "--skip-git-repo-check"]
    if sandbox:
        # workspace-write keeps .git read-only unless it is listed as a writable root
        argv += ["--sandbox", "workspace-write"]
        if git_writable:
            argv += ["-c", f"sandbox_workspace_write.writable_roots={json.dumps([str(repo / '.git')])}"]
    else:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    argv.append(prompt)
    return Setup(argv, env, {"config": config})


# --- gemini ----------------------------------------------------------------------------------------------------------


def setup_gemini(home: Path, repo: Path, server: AgentServer, prompt: str, *, model: str | None = None,
                 output_format: str = "json") -> Setup:
    """``gemini -p PROMPT --output-format json --approval-mode yolo``. The endpoint is GOOGLE_GEMINI_BASE_URL; the
    settings must select API-key auth (else exit 41) and the folder must be trusted (else exit 55)."""
    settings_dir = home / ".gemini"
    settings_dir.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": 1, "disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    path = settings_dir / "settings.json"
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    env = base_env(home)
    env.update({"GEMINI_API_KEY": API_KEY, "GOOGLE_GEMINI_BASE_URL": server.base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    argv = [str(binary("gemini")), "-p", prompt, "--output-format", output_format, "--approval-mode", "yolo"]
    if model:
        argv += ["--model", model]
    return Setup(argv, env, {"settings": path})


# --- opencode --------------------------------------------------------------------------------------------------------


def setup_opencode(home: Path, repo: Path, server: AgentServer, prompt: str, *, auto: bool = True) -> Setup:
    """``opencode run --format json PROMPT`` with a provider in the file named by OPENCODE_CONFIG. ``permission``
    allows everything, so ``--auto`` is belt and braces; ``--title`` stops the title side call."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
            "options": {"baseURL": server.base_url, "apiKey": API_KEY},
            "models": {MODEL: {"name": "Scripted model",
                               "cost": {"input": PRICE_IN_PER_MTOK, "output": PRICE_OUT_PER_MTOK},
                               "limit": {"context": 200000, "output": 32000}}},
        }},
        "model": f"scripted/{MODEL}",
        "small_model": f"scripted/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "allow"},
    }
    path = home / "opencode.json"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    env = base_env(home)
    env.update({"OPENCODE_CONFIG": str(path), "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
                # opencode installs @opencode-ai/plugin into its config dir in the background at every start, with
                # its embedded npm client: offline mode makes that fail at once (a warning in its log) instead
                "npm_config_offline": "true"})
    argv = [str(binary("opencode")), "run", "--format", "json", "--title", "scripted run"]
    if auto:
        argv.append("--auto")
    argv.append(prompt)
    return Setup(argv, env, {"config": path})


# --- aider -----------------------------------------------------------------------------------------------------------


def setup_aider(home: Path, repo: Path, server: AgentServer, prompt: str, *, files: tuple[str, ...] = ("MISSION.md",),
                state_dir: str = ".dun/cache/aider", stream: bool = False) -> Setup:
    """``aider --message-file F --yes --no-pretty``: Chat Completions through OPENAI_API_BASE and ``openai/NAME``.
    SEARCH/REPLACE edits (``--edit-format diff``), auto-committed. ``--no-gitignore`` and the history files under
    ``.dun/`` keep the work tree clean; the model metadata file gives the scripted model prices, so aider prints a
    cost; LITELLM_LOCAL_MODEL_COST_MAP stops litellm fetching its price list from the network at start."""
    aider_dir = repo / state_dir
    aider_dir.mkdir(parents=True, exist_ok=True)
    message = aider_dir / "message.md"
    message.write_text(prompt, encoding="utf-8")
    metadata = home / "aider-model-metadata.json"
    metadata.write_text(json.dumps({f"openai/{MODEL}": {
        "max_input_tokens": 200000, "max_output_tokens": 32000, "litellm_provider": "openai", "mode": "chat",
        "input_cost_per_token": PRICE_IN_PER_MTOK / 1e6, "output_cost_per_token": PRICE_OUT_PER_MTOK / 1e6,
    }}, indent=2) + "\n", encoding="utf-8")
    env = base_env(home)
    env.update({"OPENAI_API_BASE": server.base_url, "OPENAI_API_KEY": API_KEY,
                "AIDER_CHECK_UPDATE": "false", "AIDER_ANALYTICS": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                # its console wraps lines (error messages too) at 80 columns otherwise
                "COLUMNS": "400"})
    argv = [str(binary("aider")), "--message-file", str(message), "--yes", "--no-pretty",
            "--stream" if stream else "--no-stream",
            "--model", f"openai/{MODEL}", "--edit-format", "diff", "--model-metadata-file", str(metadata),
            "--no-show-model-warnings", "--no-show-release-notes", "--no-gitignore", "--map-tokens", "0",
            "--no-check-update", "--no-analytics",
            "--chat-history-file", str(aider_dir / "chat.history.md"),
            "--input-history-file", str(aider_dir / "input.history"), *files]
    return Setup(argv, env, {"metadata": metadata, "message": message})


# --- pi --------------------------------------------------------------------------------------------------------------


def setup_pi(home: Path, repo: Path, server: AgentServer, prompt: str, *, mode: str = "json") -> Setup:
    """``pi -p --mode json PROMPT`` with a custom provider (``openai-completions``, ``baseUrl``) in
    ~/.pi/agent/models.json and retries off in ~/.pi/agent/settings.json. pi has no permission prompts."""
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"scripted": {
        "baseUrl": server.base_url, "api": "openai-completions", "apiKey": API_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": MODEL, "name": "Scripted model", "reasoning": False, "contextWindow": 200000,
                    "maxTokens": 32000,
                    "cost": {"input": PRICE_IN_PER_MTOK, "output": PRICE_OUT_PER_MTOK, "cacheRead": 0,
                             "cacheWrite": 0}}],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")
    settings = {"retry": {"enabled": False, "maxRetries": 0, "provider": {"maxRetries": 0}},
                "defaultProvider": "scripted", "defaultModel": MODEL}
    (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    env = base_env(home)
    env.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"})
    argv = [str(binary("pi")), "-p", "--mode", mode, "--provider", "scripted", "--model", MODEL, "--no-session",
            prompt]
    return Setup(argv, env, {"models": agent_dir / "models.json", "settings": agent_dir / "settings.json"})


CLIS: dict[str, Cli] = {
    "codex": Cli("codex", ResponsesServer, setup_codex),
    "gemini": Cli("gemini", GeminiServer, setup_gemini),
    "opencode": Cli("opencode", ChatServer, setup_opencode),
    "aider": Cli("aider", ChatServer, setup_aider),
    "pi": Cli("pi", ChatServer, setup_pi),
}


# --- reading what a CLI printed ---------------------------------------------------------------------------------------


def json_lines(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                events.append(obj)
    return events


def final_text(cli: str, stdout: str) -> str:
    """The agent's final answer as each CLI prints it on stdout (where dun must look for the status block)."""
    if cli == "codex":  # the last agent_message item
        items = [e["item"] for e in json_lines(stdout) if e.get("type") == "item.completed"]
        texts = [i.get("text", "") for i in items if i.get("type") == "agent_message"]
        return texts[-1] if texts else ""
    if cli == "gemini":  # json: {"response": ...}; stream-json: the assistant message deltas
        events = json_lines(stdout)
        if len(events) == 1 and "response" in events[0]:
            return str(events[0]["response"])
        try:
            data = json.loads(stdout)
            if isinstance(data, dict) and "response" in data:
                return str(data["response"])
        except json.JSONDecodeError:
            pass
        return "".join(str(e.get("content", "")) for e in events
                       if e.get("type") == "message" and e.get("role") == "assistant")
    if cli == "opencode":  # the text parts of the last step
        texts = [e["part"].get("text", "") for e in json_lines(stdout) if e.get("type") == "text"]
        return texts[-1] if texts else ""
    if cli == "pi":  # json mode: the last assistant message_end; text mode: stdout itself
        ends = [e["message"] for e in json_lines(stdout)
                if e.get("type") == "message_end" and (e.get("message") or {}).get("role") == "assistant"]
        if not ends:
            return stdout
        return "".join(c.get("text", "") for c in ends[-1].get("content") or [] if c.get("type") == "text")
    return stdout  # aider prints plain text
