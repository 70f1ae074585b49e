"""CLI behaviour a user relies on: help with examples, one-line errors with a non-zero exit."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.storage.spark import PROJECT_DIR
from qrepl.core.model import ConfigError, publication_from_dict


def every_command(command=main, path=()):
    """Every command of `qrepl`, the group itself and each group's commands included, as the
    words that name it (`[]` is `qrepl`)."""
    yield list(path)
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from every_command(sub, (*path, name))


COMMANDS = list(every_command())


def test_the_help_test_walks_every_command():
    assert len(COMMANDS) == 34  # qrepl, its 14 commands, and the 6 + 8 + 5 of publication, subscription, conflicts
    for group, verbs in (
        ("publication", {"create", "show", "describe", "set-policy", "range", "check"}),
        ("subscription", {"add", "list", "drop", "set-mode", "reinit", "range", "show", "filter"}),
        ("conflicts", {"list", "show", "log", "resolve", "remove"}),
    ):
        assert {c[1] for c in COMMANDS if len(c) == 2 and c[0] == group} == verbs


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(["qrepl", *c]))
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(main, command + ["--help"])
    assert result.exit_code == 0
    assert "Example" in result.output


def test_help_imports_neither_pyspark_nor_dbt():
    """Every module imports at its top, but pyspark and dbt only inside the functions that use
    them: `qrepl --help` (of every command) starts no JVM and loads neither."""
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from qrepl.cli import main\n"
        f"for command in {COMMANDS!r}:\n"
        "    assert CliRunner().invoke(main, command + ['--help']).exit_code == 0\n"
        "print(sorted(m for m in ('pyspark', 'py4j', 'dbt') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "flag, verb",
    [
        (["--show", "abc"], "show CONFLICT_ID"),
        (["--log", "f.jsonl"], "log FILE"),
        (["--remove", "abc"], "remove CONFLICT_ID..."),
        (["--resolve", "abc", "--keep", "publisher"], "resolve CONFLICT_ID --keep"),
    ],
)
def test_conflicts_old_flags_still_work_and_say_which_verb_replaces_them(flag, verb):
    """The old flag runs (here up to the schema check, before any JVM) after one line on stderr."""
    result = CliRunner().invoke(main, ["conflicts", *flag, "--schema", "x y"])
    assert result.exit_code == 1
    warning, error = result.stderr.splitlines()
    assert warning.startswith(f"qrepl: `qrepl conflicts {flag[0]}` is deprecated, use `qrepl conflicts {verb}")
    assert "invalid schema name 'x y'" in error
    assert result.stdout == ""


def test_conflicts_verbs_say_nothing_of_deprecation():
    result = CliRunner().invoke(main, ["conflicts", "show", "abc", "--schema", "x y"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "deprecated" not in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["conflicts", "--subscriber", "s", "list"], "give the options after the verb"),
        (["conflicts", "resolve", "abc"], "Missing option '--keep'"),
        (["conflicts", "remove"], "Missing argument 'CONFLICT_ID...'"),
        (["conflicts", "--resolve", "abc"], "--resolve CONFLICT_ID and --keep subscriber|publisher go together"),
    ],
)
def test_conflicts_usage_errors(args, message):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and message in result.output


def test_replay_reference_writes_the_contract_files(tmp_path):
    result = CliRunner().invoke(
        main,
        ["replay", str(PROJECT_DIR / "scenarios" / "publisher_wins_basic.json"), "--out", str(tmp_path), "--reference"],
    )
    assert result.exit_code == 0, result.output
    out = tmp_path / "publisher_wins_basic"
    for name in [
        "conflicts",
        "compensating_commands",
        "transaction_outcomes",
        "subscriptions",
        "queue_rejects",
        "publisher/customers",
        "publisher/order_lines",
    ]:
        assert (out / f"{name}.jsonl").exists(), name


def test_bad_scenario_fails_with_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"publication": "sales", "policy": "coin toss", "articles": []}')
    result = CliRunner().invoke(main, ["replay", str(bad), "--out", str(tmp_path / "o"), "--reference"])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and "unknown policy 'coin toss'" in result.output


@pytest.mark.parametrize(
    "config, message",
    [
        ({"publication": "sales; drop", "articles": []}, "invalid publication name"),
        (
            {
                "publication": "p",
                "policy": "sub wins",
                "articles": [{"name": "a", "key": ["k"], "columns": {"k": "interval"}}],
            },
            "unsupported type",
        ),
        (
            {"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "float"}}]},
            "key column k must be of type",
        ),
        (
            {"publication": "p", "articles": [{"name": "a", "key": ["x"], "columns": {"k": "int"}}]},
            "not among its columns",
        ),
        (
            {"publication": "p", "articles": [{"name": "a b", "key": ["k"], "columns": {"k": "int"}}]},
            "invalid article name",
        ),
        ({"publication": "p", "conflict_retention_days": -1, "articles": []}, "conflict_retention_days"),
    ],
)
def test_bad_publication_config_is_rejected(config, message):
    with pytest.raises(ConfigError, match=message):
        publication_from_dict(config)


def test_sql_server_policy_spellings_are_accepted():
    cfg = {"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "int"}}]}
    assert publication_from_dict({**cfg, "policy": "pub wins"}).policy == "publisher_wins"
    assert publication_from_dict({**cfg, "policy": "sub reinit"}).policy == "publisher_wins_reinit"
    assert publication_from_dict({**cfg, "policy": "sub wins"}).policy == "subscriber_wins"
