{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        meta={'qrepl_skip_when': 'batch_is_empty'},
    )
}}
/* One row per valid command of the batch, judged against the state it meets (docs/spec.md §5):
   a transaction's first command on a row meets what the last applied transaction left there
   (or the publisher's row before the batch), a later one meets the transaction's own write.
   Carries the transaction's outcome and whether this command's conflict is logged.
   Decides docs/spec.md 5.2 (Judging a command), 5.5 (publisher_wins), 5.6 (publisher_wins_reinit), 5.7 (subscriber_wins). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_sequenced as (

    select * from {{ ref('int_queued_commands_sequenced') }}

),

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}

),

int_transactions_resolved as (

    select * from {{ ref('int_transactions_resolved') }}
    where batch_id = {{ batch_id }}

),

row_states as (

    select
        int_transaction_rows.article,
        int_transaction_rows.row_key,
        int_transaction_rows.tran_pos as pos,
        int_transactions_resolved.is_applied,
        named_struct(
            'row_exists', not int_transaction_rows.produces_absent,
            'version', int_transaction_rows.produced_version,
            'row_image', int_transaction_rows.produced_row
        ) as state_after,
        named_struct(
            'row_exists', int_transaction_rows.root_exists,
            'version', int_transaction_rows.root_version,
            'row_image', int_transaction_rows.root_row
        ) as root_state
    from int_transaction_rows
    inner join int_transactions_resolved
        on int_transaction_rows.tran_pos = int_transactions_resolved.tran_pos

),

state_before_transactions as (

    -- the state the last applied earlier transaction left on the row, or the publisher's
    -- state at the batch cut when there is none; in a batch where no row has two live
    -- transactions (macro qrepl_batch_is_coupled) that is always the state at the cut, and
    -- the window over the rows is left out
    select
        article,
        row_key,
        pos as tran_pos,
        {% if not qrepl_batch_is_coupled() -%}
            root_state as state_before
        {%- else -%}
            coalesce(
                last(case when is_applied then state_after end, true) over (
                    partition by {{ qrepl_row_partition() }} order by pos
                    rows between unbounded preceding and 1 preceding
                ),
                root_state
            ) as state_before
        {%- endif %}
    from row_states

),

commands_judged as (

    select
        commands.batch_id,
        commands.tran_pos,
        commands.subscriber,
        commands.tran_id,
        commands.command_seq,
        commands.article,
        commands.row_key,
        commands.op,
        commands.old_version,
        commands.new_version,
        commands.typed_row,
        commands.step_on_row,
        commands.prejudged_outcome,
        resolved.is_applied,
        case
            when commands.step_on_row = 1 then before.state_before.row_exists
            else commands.previous_op <> 'D'
        end as met_row_exists,
        case
            when commands.step_on_row = 1 then before.state_before.version
            else commands.previous_new_version
        end as met_version,
        case
            when commands.step_on_row = 1 then before.state_before.row_image
            else commands.previous_typed_row
        end as met_row,
        case
            when commands.prejudged_outcome is not null then null
            when commands.step_on_row = 1
                then
                    {{ judge_command(
                        'commands.op',
                        'before.state_before.row_exists',
                        'before.state_before.version',
                        'commands.old_version',
                    ) }}
            else commands.own_write_conflict_type
        end as conflict_type
    -- the commands come partitioned by tran_pos alone from their sequencing, and every join
    -- and window here is by transaction: they are not shuffled again. So the join to the
    -- row states is on tran_pos, and the row is matched in a condition Spark keeps out of
    -- the join keys (the coalesce): as join keys, article and row_key would make Spark
    -- shuffle the commands by all three (docs/stack.md note 21)
    from int_queued_commands_sequenced as commands
    left join state_before_transactions as before
        on
            commands.tran_pos = before.tran_pos
            and coalesce(commands.article = before.article and commands.row_key = before.row_key, false)
    inner join int_transactions_resolved as resolved
        on commands.tran_pos = resolved.tran_pos

),

transactions_judged as (

    select
        commands_judged.*,
        max(conflict_type is not null) over (partition by tran_pos) as transaction_conflicts
    from commands_judged

),

subscriber_cuts as (

    -- publisher_wins_reinit rejects a subscriber's transactions from its first conflicting
    -- one on (the cut); the other policies have no cut, and spare the window over every
    -- command of each subscriber
    select
        transactions_judged.*,
        {%- if publication.policy == 'publisher_wins_reinit' %}
            min(case when transaction_conflicts then tran_pos end) over (partition by subscriber) as subscriber_cut
        {%- else %}
            cast(null as int) as subscriber_cut
        {%- endif %}
    from transactions_judged

),

outcomes as (

    select
        subscriber_cuts.*,
        '{{ publication.policy }}' as policy,
        case
            when prejudged_outcome is not null then prejudged_outcome
            {%- if publication.policy == 'subscriber_wins' %}
                when transaction_conflicts then 'applied_with_conflicts'
            {%- elif publication.policy == 'publisher_wins_reinit' %}
                when tran_pos >= subscriber_cut then 'rejected_reinit'
            {%- else %}
                when transaction_conflicts then 'rejected'
            {%- endif %}
            else 'applied'
        end as outcome,
        conflict_type is not null
        {%- if publication.policy == 'publisher_wins_reinit' %}
            and tran_pos = subscriber_cut
        {%- endif %} as is_logged_conflict
    from subscriber_cuts

),

final as (

    select
        batch_id,
        tran_pos,
        subscriber,
        tran_id,
        command_seq,
        article,
        row_key,
        op,
        old_version,
        new_version,
        typed_row,
        step_on_row,
        is_applied,
        met_row_exists,
        met_version,
        met_row,
        conflict_type,
        is_logged_conflict,
        outcome,
        policy,
        subscriber_cut
    from outcomes
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
