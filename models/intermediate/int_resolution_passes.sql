/* The resolution's set-based passes (docs/architecture.md §5), the first of its three steps
   (then int_resolution_folded, then int_transactions_resolved). One row per candidate: per
   (live transaction, publisher row) of the batch, the carried columns with the decision of
   the last pass (`applied`) and whether that decision is exact (`settled`). Ephemeral, like
   every step of the resolution: decided inside the judging's statement
   (int_queued_commands_judged), which stores the decisions; every input is frozen with the
   batch, so deciding again after a crash decides the same.

   A row state is the row's version ('' for a row without one), or null for no row.
     candidates   one row per (live transaction, publisher row), states as bytes
     states_<k>   per candidate: the state it meets if the earlier candidates on its row were
                  decided as in pass k - 1 (pass 0: as if all were applied), and whether that
                  state is known exactly (every earlier one was settled)
     decided_<k>  per transaction: applied in pass k, and settled (its decision is exact:
                  every state it meets is known, and under reinit so is every earlier
                  decision of its subscriber)
   Pass 0 settles the transactions that are first on every row they touch. A pass after it
   settles every transaction whose earlier candidates on all its rows were settled by the
   pass before, so each pass reaches one link further along chains of dependent
   transactions; what is left is folded (int_resolution_folded). In a batch in which no
   publisher row has two candidates (macro qrepl_resolution) every candidate meets the
   row as the batch cut found it: pass 0 settles every transaction, and there is no later
   pass and no window over the rows.
   Decides docs/spec.md 5.2 (Judging a command), 5.5 (publisher_wins), 5.6 (publisher_wins_reinit). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
{%- set reinit = publication.policy == 'publisher_wins_reinit' -%}
/* how this batch is resolved (macro qrepl_resolution): whether the passes need windows over
    the rows, and how many passes run after the first */
{%- set resolution = qrepl_resolution() -%}
{%- set coupled = resolution.coupled -%}
/* the columns every pass carries on */
{%- set carried = ['tran_pos', 'subscriber', 'article', 'row_key', 'expects_absent', 'expected_version',
    'has_own_write_conflict', 'produced_state', 'root_state'] -%}
/* passes after the first: 2 for a coupled batch, none for an uncoupled one or for a coupled
    one with few candidates that follow another on their row (the fold of that remainder costs
    less than two more passes). Each pass costs two windows over the candidates (by row, by
    transaction) */
{%- set passes = resolution.passes -%}
/* the step this model returns: the last pass's decisions */
{%- set last_pass = 'decided_' ~ passes %}

with

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}
    where batch_id = {{ batch_id }} and prejudged_outcome is null

),

candidates as (

    -- states as bytes (macro qrepl_state_bytes): narrower to carry and to compare than text
    select
        int_transaction_rows.tran_pos,
        int_transaction_rows.subscriber,
        int_transaction_rows.article,
        int_transaction_rows.row_key,
        int_transaction_rows.expects_absent,
        {{ qrepl_state_bytes('int_transaction_rows.expected_version') }} as expected_version,
        int_transaction_rows.has_own_write_conflict,
        case
            when not int_transaction_rows.produces_absent
                then {{ qrepl_state_bytes("coalesce(int_transaction_rows.produced_version, '')") }}
        end as produced_state,
        case
            when int_transaction_rows.root_exists
                then {{ qrepl_state_bytes("coalesce(int_transaction_rows.root_version, '')") }}
        end as root_state
    from int_transaction_rows

),

-- Passes. Pass 0 judges every candidate as if each earlier one on its row were applied;
-- pass k judges it by the decisions of pass k - 1. A candidate's state is exact when every
-- earlier candidate on its row is settled (a rejected one leaves the row as it was, an
-- applied one leaves what it produced), so a transaction all of whose states are exact is
-- decided exactly: it is settled. Settled transactions stay settled and keep their decisions.
{% for k in range(passes + 1) -%}
    states_{{ k }} as (

        select
            {{ carried | join(', ') }},
            {% if not coupled -%}
                /* each candidate is the only one on its row: it meets the row as cut */
                root_state as state_met,
                true as state_known
            {%- elif k == 0 -%}
                {{ qrepl_met_state('true') }} as state_met,
                {{ qrepl_after_settled('false') }} as state_known
            {%- else -%}
                {{ qrepl_met_state('applied') }} as state_met,
                {{ qrepl_after_settled('settled') }} as state_known
            {%- endif %}
        from {{ 'candidates' if k == 0 else 'decided_' ~ (k - 1) }}
        {%- if coupled %}
            window earlier_on_row as (
                partition by {{ qrepl_row_partition() }} order by tran_pos rows between unbounded preceding and 1 preceding
            )
        {%- endif %}

    ),

    decided_{{ k }} as (

        /* applied: every row matches; under reinit, and no earlier transaction of the
            subscriber is rejected (the first rejected one cuts it) */
        select
            {{ carried | join(', ') }},
            {%- if reinit %}
                transaction_matches and coalesce(
                    tran_pos < min(case when not transaction_matches then tran_pos end) over by_subscriber, true
                ) as applied,
                transaction_known and coalesce(
                    tran_pos < min(case when not transaction_known then tran_pos end) over by_subscriber, true
                ) as settled
            {%- else %}
                transaction_matches as applied,
                transaction_known as settled
            {%- endif %}
        from (
            select
                {{ carried | join(', ') }},
                bool_and(not has_own_write_conflict and {{ qrepl_state_matches('state_met') }}) over (
                    partition by tran_pos
                ) as transaction_matches,
                bool_and(state_known) over (partition by tran_pos) as transaction_known
            from states_{{ k }}
        ) as judged
        window by_subscriber as (partition by subscriber)

    ),

{% endfor -%}

final as (

    select * from {{ last_pass }}

)

select * from final
