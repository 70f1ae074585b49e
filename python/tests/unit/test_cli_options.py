"""The CLI's group options: `--schema` declared once (also from $QREPL_SCHEMA, and accepted after
the command), and `--debug` for the whole error. A bad schema name is refused before any JVM."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.cli.app import group_options_first as _group_options_first


@pytest.mark.parametrize(
    "args, env",
    [
        (["--schema", "x y", "status"], {}),
        (["status", "--schema", "x y"], {}),
        (["subscription", "list", "--schema=x y"], {}),
        (["status"], {"QREPL_SCHEMA": "x y"}),
        (["dbt", "build", "--schema", "x y"], {}),
    ],
)
def test_schema_from_option_anywhere_or_env_is_validated_once(args, env):
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert "invalid schema name 'x y'" in result.output
    assert "Traceback" not in result.output


def test_debug_shows_the_whole_error():
    result = CliRunner().invoke(main, ["--debug", "status", "--schema", "x;y"])
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.output
    assert "ConfigError: invalid schema name 'x;y'" in result.output


def test_the_one_line_error_points_at_debug():
    result = CliRunner().invoke(main, ["status", "--schema", "x;y"])
    assert result.output.strip().endswith("(--debug shows the whole error)")


def test_only_schema_moves_in_front():
    """dbt's own flags (`--debug` too) and anything after `--` stay with the command."""
    assert _group_options_first(["dbt", "run", "--debug", "--schema", "s", "--", "--schema", "t"]) == [
        "--schema",
        "s",
        "dbt",
        "run",
        "--debug",
        "--",
        "--schema",
        "t",
    ]
    assert _group_options_first(["conflicts", "--schema=s", "--json"]) == ["--schema=s", "conflicts", "--json"]


def test_schema_is_declared_once():
    def schema_options(command) -> int:
        own = sum(1 for p in command.params if "--schema" in getattr(p, "opts", ()))
        return own + sum(schema_options(c) for c in getattr(command, "commands", {}).values())

    assert schema_options(main) == 1
