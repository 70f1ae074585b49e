"""The modules split by concern (issue 59) stay importable for one release as re-exports:
every public name they held still resolves, to the object its new module holds."""

from __future__ import annotations

import importlib

import pytest

from qrepl.cli.app import main
from qrepl.core import model
from qrepl.core.vocabulary import Progress
from qrepl.services import service

# Each public name core/model.py and services/service.py held before the split.
MODEL_NAMES = """BASE64_TEXT CONFLICT_CODES CONFLICT_REASONS CURRENT_MODES DATE_TEXT DECIMAL_CONTEXT DECIMAL_TEXT
DECIMAL_TYPE DEFAULT_IDENTITY_RANGE IDENTIFIER INTEGER_BITS KEY_TYPES MAX_IDENTITY_RANGE MAX_KEY_BYTES MAX_ROW_BYTES
POLICIES POLICY_ALIASES PUBLISHER_RANGE_OWNER QREPL_TABLES REINITIALIZING REJECT_REASONS REJECT_WHOLE_TRANSACTION
RESERVED_COLUMNS SCALAR_TYPES TIMESTAMP_NTZ_TEXT TIMESTAMP_TEXT TIMESTAMP_TYPES UPDATE_MODES UPDATE_MODE_ALIASES
UUID_TEXT Article ConfigError ConflictError Publication binary_value canonical_key capture_refusal
check_article_table check_identifier check_type coerce_json_value conflict_message decimal_fits decimal_text
decimal_value dumps fit_hint float32 initial_current_mode jackson_text next_identity next_range normalize_policy
normalize_row normalize_update_mode parse_json_object publication_from_dict qrepl_table_refusal queued_value_ok
range_refusal stamp_text switch_refusal timestamp_text timestamp_value typed_row value_refusal""".split()
SERVICE_NAMES = """Echo REMOVED default_schema warehouse project_file output_dir run_dbt load_publication_file
create_publication describe_table add_subscription assign_identity_range identity_ranges drop_publication
publication set_policy list_subscriptions drop_subscription unlock transaction_outcomes set_mode run_reader
list_conflicts write_conflict_viewer resolve_conflict remove_conflicts status""".split()


@pytest.mark.parametrize(
    "module, names", [(model, MODEL_NAMES), (service, SERVICE_NAMES)], ids=["core.model", "services.service"]
)
def test_a_split_module_still_offers_every_name_it_held(module, names):
    assert sorted(module.__all__) == sorted(names)
    for name in names:
        value = getattr(module, name)
        home = getattr(value, "__module__", None)
        if home and home.startswith("qrepl.") and home != module.__name__:
            assert getattr(importlib.import_module(home), name) is value, name


def test_the_old_names_are_the_new_things():
    assert service.Echo is Progress
    assert importlib.import_module("qrepl.cli.commands").main is main
    for module in (model, service, importlib.import_module("qrepl.cli.commands")):
        assert "for one release" in module.__doc__
