"""`make bench-profile` times a model step by step: it must find every top-level step of the
compiled model, including one whose first line a `{#- -#}` comment joined to its `as (`, and
none of the steps nested inside an inlined ephemeral model or a subquery."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from cte_profile import steps_of  # noqa: E402

COMPILED = """with __dbt__cte__stg as (
with
source as (select * from q),
renamed as (-- depends_on: q
select a from source)
select * from renamed
), first_step as (select
        a, ' as (' as text
    from __dbt__cte__stg
),

second_step as (

    select * from (select a from first_step) as inner_one

),

final as (
    select * from second_step window w as (partition by a)
)

select * from final"""


def test_steps_are_the_top_level_ones_in_order():
    body, steps = steps_of(COMPILED)
    assert steps == ["__dbt__cte__stg", "first_step", "second_step", "final"]
    assert not body.rstrip().endswith("select * from final")


def test_a_model_not_ending_in_final_is_one_clear_line():
    with pytest.raises(SystemExit, match="does not end in `select \\* from final`"):
        steps_of("select 1")


COMMENTED = """/* A model's header: what it decides (docs/spec.md §5), and why it's
   done in named steps as (below) */

with

first_step as (

    -- the row's state (macro qrepl_state_bytes: an apostrophe, and "looks as (" in prose
    select a from q

),

-- passes follow (1) every one a step as (x
second_step as (
    select a from first_step /* a nested (comment /* here */ ) */
),

final as (select * from second_step)

select * from final"""


def test_comments_are_not_read_as_steps_or_brackets():
    """The models' why-comments are SQL comments (they reach target/compiled): their words,
    brackets and apostrophes are not code."""
    assert steps_of(COMMENTED)[1] == ["first_step", "second_step", "final"]
