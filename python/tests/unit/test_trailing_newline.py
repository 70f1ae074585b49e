"""Issue 39: a name with a trailing newline ("north\\n") is refused. `re.match` with `^...$`
lets it through, since `$` also matches just before a final newline; the checks use \\Z
(Python) and \\z (Java, in the SQL's rlike) instead."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.core.model import UUID_TEXT, ConfigError, check_identifier, publication_from_dict, queued_value_ok


@pytest.mark.parametrize("name", ["north\n", "north\r\n", "north\n\n", "\nnorth"])
def test_identifier_with_a_newline_is_refused(name):
    with pytest.raises(ConfigError, match="invalid subscriber name"):
        check_identifier(name, "subscriber")


def test_publication_yaml_block_scalar_with_trailing_newline_is_refused_with_one_line(tmp_path):
    config = tmp_path / "p.yml"
    # `name: |` is a YAML block scalar: its value is "north\n"
    config.write_text(
        "publication: p\narticles:\n  - name: |\n      north\n    key: [item_id]\n    columns: {item_id: int}\n"
    )
    result = CliRunner().invoke(main, ["publication", "create", "--config", str(config), "--schema", "qrepl_nl"])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0
    assert "invalid article name 'north\\n'" in result.output


def test_publication_with_newline_names_is_refused():
    with pytest.raises(ConfigError, match="invalid column name"):
        publication_from_dict(
            {"publication": "p", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "int", "qty\n": "int"}}]}
        )
    with pytest.raises(ConfigError, match="invalid publication name"):
        publication_from_dict(
            {"publication": "p\n", "articles": [{"name": "a", "key": ["k"], "columns": {"k": "int"}}]}
        )


def test_subscription_add_refuses_a_name_with_a_trailing_newline():
    result = CliRunner().invoke(main, ["--schema", "qrepl_nl\n", "subscription", "add", "north"])
    assert result.exit_code != 0 and "invalid schema name" in result.output


def test_queued_texts_with_a_trailing_newline_are_not_versions_dates_or_decimals():
    assert UUID_TEXT.match("0f8fad5b-d9cb-469f-a165-70867728950e")
    assert not UUID_TEXT.match("0f8fad5b-d9cb-469f-a165-70867728950e\n")
    assert not queued_value_ok("2026-01-31\n", "date")
    assert not queued_value_ok("1.5\n", "decimal(10,2)")
