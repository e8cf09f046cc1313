"""The posture in interpreter code (runs.py hands it the code a command runs): SDK calls that change state on a
platform others use - a model promoted or deleted in a registry, a model or data set pushed to a hub or made public,
a store listing committed, a table replaced in a remote warehouse, mail or chat messages sent to people. Calls aimed
at this machine (a tracking server or SMTP relay on localhost, a sqlite file) and mail to the reserved example
domains stay free."""

from __future__ import annotations

import re

from dun.guard.effects import Facts
from dun.guard.hosts import host_of, is_local
from dun.guard.posture_http import people_host

# SDK calls that change a remote registry, hub or store whatever their arguments
_ALWAYS = re.compile(
    r"\.(?:push_to_hub|upload_folder|upload_file|upload_large_folder|create_commit|delete_repo|delete_file|delete_folder"
    r"|update_repo_settings|update_repo_visibility|move_repo|delete_tag|transition_model_version_stage"
    r"|set_registered_model_alias|delete_registered_model_alias|delete_registered_model|delete_model_version"
    r"|rename_registered_model|set_model_version_tag|delete_experiment|delete_run|dataset_create_new"
    r"|dataset_create_version|kernels_push|competition_submit|create_deployment|delete_deployment|trigger_dag"
    r"|clear_task_instances|send_message|sendmail|chat_postMessage|chat_scheduleMessage|conversations_invite"
    r"|files_upload_v2|send_email|send_raw_email|publish_message|update_endpoint|delete_endpoint|undeploy_all"
    r"|undeploy_model|undeploy|delete_model_package|update_model_version)\s*\(")
_POSTS = re.compile(r"\b(?:requests|httpx|session|client)\.(?:post|put|patch)\s*\(|\bfetch\s*\([^)]*method\s*:\s*['\"]"
                    r"(?:POST|PUT|PATCH)|urlopen\s*\(\s*Request\s*\([^)]*data\s*=|axios\.(?:post|put|patch)\s*\(", re.I)
# Platforms whose objects' .delete() removes remote state (wandb runs and artifacts, ClearML tasks, comet experiments)
_PLATFORMS = re.compile(r"\b(?:wandb|clearml|comet_ml|neptune|mlflow|kaggle|huggingface_hub|sagemaker|vertexai"
                        r"|google\.cloud\.aiplatform|azureml|dvc\.api|prefect|dagster|airflow)\b")
_DELETE = re.compile(r"\.(?:delete|remove|archive|purge|destroy)\s*\(")
_STORE_COMMIT = re.compile(r"androidpublisher|appstoreconnect|edits\(\)\s*\.\s*commit\s*\(")
_REPLACE_TABLE = re.compile(r"\.to_sql\s*\([^)]*if_exists\s*=\s*['\"]replace['\"]|\.to_gbq\s*\([^)]*if_exists\s*=\s*"
                            r"['\"]replace['\"]|\.saveAsTable\s*\([^)]*\)|mode\s*\(\s*['\"]overwrite['\"]\s*\)")
_URL = re.compile(r"""['"]([a-z][a-z0-9+.-]*://[^'"\s]+)['"]""", re.I)
_MAIL_TO = re.compile(r"""['"]([\w.+-]+@[\w-]+(?:\.[\w-]+)+)['"]""")
_RESERVED = re.compile(r"@(?:[\w-]+\.)*(?:example\.(?:com|org|net)|[\w-]+\.(?:example|test|invalid|localhost))$",
                       re.I)
_LOCAL_SMTP = re.compile(r"""(?:SMTP(?:_SSL)?\s*\(\s*|host['"]?\s*[:=]\s*)['"](?:localhost|127\.0\.0\.1|::1)['"]""")
_MAILER = re.compile(r"\b(?:smtplib|nodemailer|ActionMailer|Mailer|Net::SMTP|Mail\.new|PHPMailer|lettre)\b")
_MAIL_SEND = re.compile(r"\.(?:sendmail|send_message|sendMail|deliver_now|deliver_later|deliver!?|send)\b")


def mark(facts: Facts, code: str) -> None:
    """Raise `posture` when the code changes state on a platform others use."""
    why = _why(code)
    if why and "posture" not in facts.signals:
        facts.signals.add("posture")
        facts.notes["posture"] = f"why: {why}"


def _why(code: str) -> str | None:
    local = [u for u in _URL.findall(code) if (h := host_of(u)) and is_local(h)]
    remote = [u for u in _URL.findall(code) if (h := host_of(u)) and not is_local(h)]
    if _MAILER.search(code) and _MAIL_SEND.search(code):
        people = [a for a in _MAIL_TO.findall(code) if not _RESERVED.search(a)]
        return f"code mails {people[0]}" if people and not _LOCAL_SMTP.search(code) else None
    if _POSTS.search(code) and (host := next((h for u in remote if (h := host_of(u)) and people_host(h)), None)):
        return f"code posts to {host}, which messages or pages people"
    if m := _ALWAYS.search(code):
        if local and not remote:
            return None  # a tracking server or hub on this machine
        return f"code calls {m.group(0).strip('.( ')}, which changes a platform others use"
    if _PLATFORMS.search(code) and (m := _DELETE.search(code)) and not (local and not remote):
        return f"code deletes on {_PLATFORMS.search(code).group(0)}"  # type: ignore[union-attr]
    if _STORE_COMMIT.search(code) and "commit" in code:
        return "code commits a store listing or release"
    if _REPLACE_TABLE.search(code) and remote:
        return f"code replaces a table on {host_of(remote[0])}"
    return None
