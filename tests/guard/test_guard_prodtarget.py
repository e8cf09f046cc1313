"""prod.write (dun/guard/prodtarget.py): production named by where a call points, not by its verb. The denial says
what named production, so the agent (and the operator reading the log) sees why an everyday verb was refused."""

from __future__ import annotations

import pytest
from guard_support import bash


@pytest.mark.parametrize(("command", "named"), [
    ("RAILS_ENV=production bin/rails db:migrate", "RAILS_ENV=production"),
    ("alembic -c alembic.prod.ini downgrade base", "-c alembic.prod.ini"),
    ('psql "$PROD_DATABASE_URL" -c "DELETE FROM orders WHERE id = 1"', "PROD_DATABASE_URL"),
    ("heroku run rails db:rollback -a shoplet-prod", "shoplet-prod"),
    ("echo 'Order.delete_all' | heroku run rails console -a shoplet-prod", "shoplet-prod"),
    ("export NODE_ENV=production; npx knex migrate:rollback", "NODE_ENV=production"),
])
def test_a_change_aimed_at_production_is_denied_and_says_what_named_it(command: str, named: str) -> None:
    verdict = bash(command)
    assert verdict.decision == "deny" and verdict.rule == "prod.write", command
    assert named in (verdict.reason or ""), verdict.reason


@pytest.mark.parametrize("command", [
    "RAILS_ENV=production bin/rails db:migrate:status",
    "alembic -c alembic.prod.ini upgrade head --sql",
    'psql "$PROD_DATABASE_URL" -c "SELECT count(*) FROM orders"',
    "heroku logs -a shoplet-prod --tail",
    "RAILS_ENV=development bin/rails db:migrate",
    "export NODE_ENV=production; npm run build",
])
def test_reads_and_other_environments_are_not_prod_writes(command: str) -> None:
    assert bash(command).rule != "prod.write", command
