"""dun: find the outstanding work in a repository and drive a coding agent until it is done.

The folders are the parts (docs/architecture.md draws the layers and the life of one iteration):

    dun/cli/        click and the command functions; the one error handler maps exceptions to exit codes
    dun/plugin.py   the public API: everything a third-party plugin imports
    dun/service/    `dun service`: the loop under a systemd user unit or a launchd agent
    dun/report_html/ `dun report`: the night's HTML report in one self-contained file
    dun/loop/       the iteration engine (engine.py, conclude.py), `dun loop` (driver.py), the shell driver's
                    stepper (stepper.py), the policy, the circuit breaker, the rate window, REPORT.md
    dun/fleet/      parallel loops: worktrees, the limits loops of one agent account share, `dun fleet status`
    dun/notify/     notifications (apprise URLs, a command)
    dun/prompt/     the prompt's sections and the work and confirmation prompts
    dun/history/    the SQLite run history rebuilt from the logs, deficiencies, review items, status reports
    dun/trust/      verify, don't trust: claims, the task ratchet, checker tampering, removed tests
    dun/guard/      `dun guard`, the PreToolUse hook: a shell reader and rules as data
    dun/sandbox/    `dun sandbox`: bubblewrap, so the agent (and its checks) write the work tree and little else
    dun/agents/     one adapter per agent CLI (command line, environment, answer shape, errors, cost), the runner
    dun/answer/     the status block, the shapes of agents' answers, the handoff
    dun/checks/     the check types (`type:` in a manifest) and the readers they share (coverage, markdown)
    dun/output/     the formats of `dun check` (text, json, llm, junit, github)
    dun/engine/     session, plugin manager and hookspecs, manifests, catalog, check API, results, runner
    dun/config/     config keys, the schema-as-data validator, YAML with positions
    dun/store/      the owner of `.dun/`: every path, the typed records, the loop lock
    dun/core/       exit codes and kinds, errors, atomic writes, processes, git, snapshot, globs, text reads
"""

__version__ = "0.1.0"
# The name it is installed by (pyproject.toml's project.name; "dun" on the public index is another project). The
# command and the import stay `dun`.
DISTRIBUTION = "dun-loop"
