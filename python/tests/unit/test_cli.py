"""CLI behaviour a user relies on: help with examples, one-line errors with a non-zero exit."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.storage.spark import PROJECT_DIR
from qrepl.core.model import ConfigError, publication_from_dict


@pytest.mark.parametrize("command", [[], ["demo"], ["run"], ["conflicts"], ["viewer"], ["replay"], ["dbt"],
                                     ["status"], ["maintain"], ["enqueue"], ["distribute"], ["publication", "create"], ["publication", "show"],
                                     ["publication", "set-policy"], ["subscription", "add"],
                                     ["subscription", "list"], ["subscription", "drop"], ["subscription", "reinit"]])
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(main, command + ["--help"])
    assert result.exit_code == 0
    assert "Example" in result.output


def test_replay_reference_writes_the_contract_files(tmp_path):
    result = CliRunner().invoke(main, ["replay", str(PROJECT_DIR / "scenarios" / "publisher_wins_basic.json"), "--out", str(tmp_path),
                                       "--reference"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "publisher_wins_basic"
    for name in ["conflicts", "compensating_commands", "transaction_outcomes", "subscriptions", "queue_rejects",
                 "publisher/customers", "publisher/order_lines"]:
        assert (out / f"{name}.jsonl").exists(), name


def test_bad_scenario_fails_with_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"publication": "sales", "policy": "coin toss", "articles": []}')
    result = CliRunner().invoke(main, ["replay", str(bad), "--out", str(tmp_path / "o"), "--reference"])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and "unknown policy 'coin toss'" in result.output


@pytest.mark.parametrize("config, message", [
    ({"publication": "sales; drop", "articles": []}, "invalid publication name"),
    ({"publication": "p", "policy": "sub wins", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "interval"}}]},
     "unsupported type"),
    ({"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "float"}}]},
     "key column k must be of type"),
    ({"publication": "p", "articles": [{"name": "a", "key": ["x"], "columns": {"k": "int"}}]}, "not among its columns"),
    ({"publication": "p", "articles": [{"name": "a b", "key": ["k"], "columns": {"k": "int"}}]}, "invalid article name"),
    ({"publication": "p", "conflict_retention_days": -1, "articles": []}, "conflict_retention_days"),
])
def test_bad_publication_config_is_rejected(config, message):
    with pytest.raises(ConfigError, match=message):
        publication_from_dict(config)


def test_sql_server_policy_spellings_are_accepted():
    cfg = {"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "int"}}]}
    assert publication_from_dict({**cfg, "policy": "pub wins"}).policy == "publisher_wins"
    assert publication_from_dict({**cfg, "policy": "sub reinit"}).policy == "publisher_wins_reinit"
    assert publication_from_dict({**cfg, "policy": "sub wins"}).policy == "subscriber_wins"
