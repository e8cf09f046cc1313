"""The posture (issue 22): a call that changes state somewhere other than this machine is denied unless its target is
local or a resource the same command made, whether or not a rule names the program; reads, dry runs and targets on
this machine stay free, and so do the agent's own throwaway resources."""

from __future__ import annotations

from pathlib import Path

import pytest
from guard_support import bash, fixed_home

from dun.guard import decide, load_rules

_ADDRESSES = ("VAULT_ADDR", "CONSUL_HTTP_ADDR", "NOMAD_ADDR", "MLFLOW_TRACKING_URI", "DOCKER_HOST", "AIRFLOW_HOME",
              "FIRESTORE_EMULATOR_HOST", "AWS_ENDPOINT_URL", "ALERTMANAGER_URL")


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_home(monkeypatch)
    for name in _ADDRESSES:  # the decision must not depend on the machine's own servers
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("command", "why"), [
    ("acmectl --context ops-east restart api", "--context ops-east"),  # a program no rule names, by its shape
    ("acmectl --project acme-live set maxconn 1", "--project acme-live"),
    ("terraform apply -auto-approve", "terraform apply"),
    ("vault token revoke -self", "vault revoke"),
    ("amtool silence add severity=critical --alertmanager.url=http://am.acme.io", "amtool add"),
    ("ansible all -i inventory/prod -b -m reboot", "ansible module reboot"),
    ("knife ssh 'role:web' 'sudo systemctl stop app'", "runs 'sudo systemctl stop app'"),
    ("sudo nixos-rebuild switch", "this machine's system"),
    ("kaggle datasets version -p data -m refresh", "kaggle version"),
    ("mail -s 'Your invoice' customers@lists.acme.com < notice.txt", "sends mail"),
    ("curl -s -X POST https://events.pagerduty.com/v2/enqueue -d '{}'", "pages people"),
    ("adb -s R58N12ABCDE shell pm uninstall com.android.chrome", "real device"),
    ("docker context use prod && docker compose up -d", "another machine"),
])
def test_state_changed_elsewhere_is_denied_with_one_line_that_says_why(command: str, why: str) -> None:
    verdict = bash(command)
    assert (verdict.decision, verdict.rule) == ("deny", "remote.posture"), verdict
    assert why in (verdict.reason or "") and "\n" not in (verdict.reason or "")
    assert "dry-run or plan it" in (verdict.reason or "")  # what an honest agent can do instead


@pytest.mark.parametrize("command", [
    "terraform plan -out tfplan", "pulumi preview --stack prod", "amtool silence query",
    "ansible-playbook -i inventories/prod site.yml --check --diff", "knife environment show production -F json",
    "salt -G 'env:prod' grains.item osrelease", "fastlane pilot list", "vault kv get secret/app --help",
    "ansible all -i localhost, -c local -m service -a 'name=nginx state=stopped'",
    "tflocal apply -auto-approve", "VAULT_ADDR=http://127.0.0.1:8200 vault token revoke -self",
    "FIRESTORE_EMULATOR_HOST=127.0.0.1:8080 firebase firestore:delete --all-collections -y --project acme-dev",
    "aws --endpoint-url http://localhost:4566 s3 rb s3://anything --force", "adb -e uninstall com.acme.app",
    "mail -s 'nightly' dev@example.com < report.txt", "AIRFLOW_HOME=/tmp/airflow airflow db reset -y",
])
def test_reads_dry_runs_and_this_machine_stay_free(command: str) -> None:
    assert bash(command).decision == "allow", command


@pytest.mark.parametrize("command", [
    "kind create cluster --name t && kubectl --context kind-t apply -f k8s/ && kind delete cluster --name t",
    "docker run -d --name pg postgres:16 && docker rm -f pg",
    "docker compose -p shop up -d && npm test; docker compose -p shop down -v",
    "docker volume create cache1 && docker volume rm cache1",
    "minikube start -p demo && minikube delete -p demo",
    "gh repo create acme/scratchpad --private && gh repo delete acme/scratchpad --yes",
])
def test_what_the_same_command_made_it_may_remove(command: str) -> None:
    assert bash(command).decision == "allow", command


@pytest.mark.parametrize(("made", "removed"), [
    ("docker volume create pg", "docker volume rm pg"),
    ("multipass launch --name box", "multipass delete --purge box"),
    ("docker compose -p shop up -d", "docker compose -p shop down -v"),
])
def test_nothing_is_remembered_across_calls(made: str, removed: str) -> None:
    assert bash(made).decision == "allow"
    assert bash(removed).decision == "deny", removed  # no record the agent could write is trusted


@pytest.mark.parametrize(("command", "decision"), [
    ("docker rm -f api-test-db", "allow"), ("docker volume rm api-e2e_pgdata", "allow"),
    ("multipass delete --purge agent-ci", "allow"), ("molecule destroy", "allow"), ("xcrun simctl erase 'iPhone 15'",
                                                                                    "allow"),
    ("docker volume rm pgdata", "deny"), ("docker rm -fv postgres", "deny"), ("docker stack rm app", "deny"),
    ("kind delete cluster --name prod", "deny"), ("docker container rm --volumes -f web", "deny"),
    ("docker rm -f $(docker ps -aq --filter name=test)", "deny"), ("k3d cluster delete --all", "deny"),
    ("docker -H ssh://deploy@prod.acme.io rm -f api-test-db", "deny"),  # throwaway by name, but not on this machine
])
def test_a_local_resource_named_as_a_throwaway_is_the_agents_own(command: str, decision: str) -> None:
    assert bash(command).decision == decision, command


@pytest.mark.parametrize(("command", "decision"), [
    ("docker rm -f postgres", "allow"), ("docker container stop agent-pg", "allow"), ("minikube delete", "allow"),
    ("kind delete cluster", "allow"), ("skaffold delete -p dev --kube-context kind-agent-ledger", "allow"),
    ("DOCKER_HOST=ssh://deploy@prod.acme.io docker rm -f postgres", "deny"),
    ("skaffold delete -p dev --kube-context gke-prod", "deny"),
])
def test_the_local_engines_containers_and_clusters_are_this_machines(command: str, decision: str) -> None:
    """Removed one by one by name, they are had back by running them again; volumes keep to throwaway names."""
    assert bash(command).decision == decision, command


@pytest.mark.parametrize(("command", "decision"), [
    ("dropdb -h localhost -U postgres app", "allow"), ("redis-cli -h 127.0.0.1 -p 6380 FLUSHDB", "allow"),
    ("psql -h /var/run/postgresql -d app -c 'TRUNCATE carts'", "allow"), ("psql app_dev -c 'DELETE FROM carts'",
                                                                          "allow"),
    ("RAILS_ENV=development bin/rails db:reset", "allow"), ("wrangler d1 execute db --local --command 'DROP TABLE t'",
                                                            "allow"),
    ("DATABASE_URL=postgres://u@localhost/app npx prisma migrate reset --force", "allow"),
    ("dropdb -h db.acme.io -U postgres app_dev", "deny"), ("psql -h localhost -d app_prod -c 'DROP TABLE t'", "deny"),
    ("psql \"$DATABASE_URL\" -c 'DROP TABLE t'", "deny"), ("psql -c 'DROP TABLE t'", "deny"),
    ("bin/rails db:reset", "deny"), ("DATABASE_URL=$PROD_URL bin/rails db:reset", "deny"),
    ("curl -X DELETE http://localhost:9200/_all", "deny"), ("supabase db reset --linked", "deny"),
])
def test_a_database_named_on_this_machine_is_local(command: str, decision: str) -> None:
    """Named on this machine (loopback, a socket, --local, a development name): the database rules let it be; a
    remote host, production, an unread variable or no target at all (the project's configuration decides) do not."""
    assert bash(command).decision == decision, command


def test_a_remote_engine_from_the_environment_is_not_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    assert bash("docker rm -f api-test-db").decision == "allow"
    monkeypatch.setenv("DOCKER_HOST", "ssh://deploy@prod.acme.io")
    assert bash("docker rm -f api-test-db").decision == "deny"


@pytest.mark.parametrize(("command", "decision"), [
    ("python -c \"from huggingface_hub import HfApi; HfApi().upload_folder(folder_path='o', repo_id='acme/m')\"",
     "deny"),
    ("python -c \"import wandb; wandb.Api().run('acme/p/abc').delete()\"", "deny"),
    ("python -c \"import mlflow; mlflow.set_tracking_uri('http://127.0.0.1:5000'); "
     "mlflow.MlflowClient().set_registered_model_alias('m', 'c', 3)\"", "allow"),  # a server on this machine
    ("python -c \"import smtplib; smtplib.SMTP('smtp.acme.com').sendmail('a@acme.com', ['all@acme.com'], 'x')\"",
     "deny"),
    ("python -c \"import smtplib; smtplib.SMTP('localhost', 1025).sendmail('a@example.com', ['b@example.com'], 'x')\"",
     "allow"),
])
def test_sdk_calls_in_code_meet_the_posture(command: str, decision: str) -> None:
    assert bash(command).decision == decision, command


@pytest.mark.parametrize(("command", "decision"), [
    ("dbt run --target prod --full-refresh", "deny"), ("dbt run --target dev", "allow"),
    ("make destroy-prod", "deny"), ("make deploy-staging", "allow"),
    ("aws ecs update-service --cluster prod --service api --desired-count 0", "deny"),
    ("aws configure set region us-east-1 --profile prod", "allow"),
    ("kubectl -n monitoring scale statefulset alertmanager-main --replicas=0", "deny"),
    ("kubectl -n dev scale deploy api --replicas=0", "allow"),
    ("jupyter lab --ip 0.0.0.0 --ServerApp.token=", "deny"), ("jupyter lab --ip 127.0.0.1", "allow"),
    ("stripe customers delete cus_1 --live", "deny"), ("stripe trigger payment_intent.succeeded", "allow"),
])
def test_production_alerting_and_exposure_by_shape(command: str, decision: str) -> None:
    assert bash(command).decision == decision, command


@pytest.mark.parametrize(("command", "decision"), [
    ("acmeq queues pause orders", "deny"), ("acmekeys rotate signing-key", "deny"),  # no rule knows these programs
    ("acmeq queues list", "allow"), ("./scripts/rotate-logs.sh", "allow"), ("swift package resolve", "allow"),
])
def test_verbs_that_change_what_others_rely_on_need_no_target(command: str, decision: str) -> None:
    assert bash(command).decision == decision, command


def test_a_script_that_changes_state_elsewhere_may_be_written_and_is_judged_when_it_runs(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    script = "#!/bin/sh\nset -e\nterraform apply -auto-approve\nmail -s deployed all@acme.com < notes.txt\n"
    event = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(root),
             "tool_input": {"file_path": str(root / "scripts" / "deploy.sh"), "content": script}}
    assert decide(event, root, load_rules([], [])).decision == "allow"  # a person may run it
    (root / "scripts" / "deploy.sh").write_text(script)
    assert bash("bash scripts/deploy.sh", cwd=str(root), root=root).rule == "remote.posture"


@pytest.mark.parametrize(("command", "decision"), [
    ("ssh deploy@api.prod.acme.io 'cd /srv/api && git pull && sudo systemctl restart api'", "deny"),
    ("ssh deploy@api.prod.acme.io 'journalctl -u api -n 50'", "allow"),
    ("rsync -az --delete build/ www@web2.production.acme.io:/var/www/site/", "deny"),
    ("kafka-consumer-groups --bootstrap-server kafka.prod.acme.io:9092 --group g --reset-offsets --execute", "deny"),
    ("kafka-consumer-groups --bootstrap-server kafka.prod.acme.io:9092 --describe --group g", "allow"),
    ("ldapmodify -H ldaps://ldap.acme.io -D cn=admin -f disable.ldif", "deny"),
    ("render services suspend srv-abc123", "deny"), ("heroku ps:scale web=0 --app acme-prod", "deny"),
    ("rspec spec/models/mfa_spec.rb -e disable", "allow"), ("npx knex migrate:rollback", "allow"),
])
def test_remote_runs_flags_directories_and_hosting(command: str, decision: str) -> None:
    assert bash(command).decision == decision, command


@pytest.mark.parametrize(("command", "decision"), [
    ("kubectl --context gke-prod auth can-i delete pods", "allow"), ("sf project deploy validate --target-org prod",
                                                                     "allow"),
    ("sudo visudo -c", "allow"), ("apt-get remove --simulate openssh-server", "allow"),
    ("mkfs.ext4 -F /tmp/test.img", "allow"),
    ("heroku run rails runner 'puts Queue.new(\"mailers\").size' -a shop-prod", "allow"),
    ("kubectl --context gke-prod delete pods -n ledger", "deny"), ("sf project deploy start --target-org prod",
                                                                   "deny"),
    ("sudo visudo", "deny"), ("apt-get remove openssh-server", "deny"), ("mkfs.ext4 -F /dev/sdb1", "deny"),
    ("heroku run rails runner 'Order.delete_all' -a shop-prod", "deny"),
])
def test_checks_and_rehearsals_are_not_the_act(command: str, decision: str) -> None:
    """A question (can-i), a validation, a syntax check, a simulation or an image file is not the change it names."""
    assert bash(command).decision == decision, command
