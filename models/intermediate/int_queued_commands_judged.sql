{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        full_refresh=false,
        pre_hook="{{ qrepl_judging_session() }}",
        meta={'qrepl_skip_when': 'batch_is_empty'},
    )
}}
/* One row per valid command of the batch, judged against the state it meets (docs/spec.md §5):
   a transaction's first command on a row meets what the last applied transaction left there
   (or the publisher's row before the batch), a later one meets the transaction's own write.
   Carries the transaction's outcome and whether this command's conflict is logged. The
   batch's decisions are made in this statement (the resolution, int_transactions_resolved,
   is ephemeral) and stored here, once, with every command: a rerun after a crash finds
   them here and does not decide again, and publisher_changes takes each row's net change
   from the applied transactions' last commands (`is_last_on_row`, with the row's state at
   the cut, `root_*`).
   Decides docs/spec.md 5.2 (Judging a command), 5.5 (publisher_wins), 5.6 (publisher_wins_reinit), 5.7 (subscriber_wins). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
/* the batch's row filters (docs/spec.md §11): none when no subscription has one, and in a dbt
   unit test (its fixtures are not tables) */
{%- set row_filters = qrepl_batch_row_filters('batch_is_empty') -%}
/* the batch's column filters (§11): an update from a subscription that takes some of an
   article's columns leaves the others as the row it meets holds them (merged_row); none when
   no subscription has one, and then these statements are what they are without them */
{%- set column_lists = qrepl_batch_column_lists('batch_is_empty') -%}
{%- set image = 'merged_row' if column_lists else 'typed_row' -%}
/* a row state: the publisher's at the batch cut, and the one a command leaves */
{%- set root_state = "named_struct('row_exists', root_exists, 'version', root_version, 'row_image', root_row)" -%}
{%- set left_state = "named_struct('row_exists', op <> 'D', 'version', new_version, 'row_image', " ~ image ~ ")" -%}

with

int_queued_commands_sequenced as (

    select * from {{ ref('int_queued_commands_sequenced') }}

),

int_transactions_resolved as (

    -- read once in this statement: the resolution is ephemeral, so each read would decide
    -- the batch again
    select * from {{ ref('int_transactions_resolved') }}

),

commands as (

    select
        int_queued_commands_sequenced.*,
        int_transactions_resolved.is_applied
    from int_queued_commands_sequenced
    inner join int_transactions_resolved
        on int_queued_commands_sequenced.tran_pos = int_transactions_resolved.tran_pos

),

{% if column_lists %}
    commands_read as (

        -- the new image and the row at the cut of the commands of each article some
        -- subscription takes only some columns of, read by the article's types
        select
            commands.*
            {{ qrepl_column_image_reads(column_lists, 'commands') }}
        from commands

    ),

    commands_merged as (

        select
            *,
            {{ qrepl_merged_image(column_lists, qrepl_batch_is_coupled()) }} as merged_row
        from commands_read

    ),

    commands_imaged as (

        -- a later command on a row meets the transaction's own earlier write there
        select
            *,
            lag(merged_row) over (partition by tran_pos, article, row_key order by command_seq) as previous_merged_row
        from commands_merged

    ),
{% endif %}

state_before_commands as (

    -- a transaction's first command on a row meets the state the last applied earlier
    -- transaction left on the row (its last command there), or the publisher's state at the
    -- batch cut when there is none. Ordered by (tran_pos, command_seq), the commands before a
    -- transaction's first one on a row are exactly the earlier transactions'. In a batch
    -- where no row has two live transactions (macro qrepl_batch_is_coupled) that state is
    -- always the cut's, and the window over the rows is left out
    select
        commands.*,
        case
            when step_on_row = 1
                then
                    {% if not qrepl_batch_is_coupled() -%}
                        {{ root_state }}
                    {%- else -%}
                        coalesce(
                            last(case when is_applied and is_last_on_row then {{ left_state }} end, true) over (
                                partition by {{ qrepl_row_partition() }} order by tran_pos, command_seq
                                rows between unbounded preceding and 1 preceding
                            ),
                            {{ root_state }}
                        )
                    {%- endif %}
        end as state_before
    from {{ 'commands_imaged' if column_lists else 'commands' }} as commands

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
        {{ 'commands.merged_row as typed_row' if column_lists else 'commands.typed_row' }},
        commands.step_on_row,
        commands.prejudged_outcome,
        commands.is_applied,
        commands.is_last_on_row,
        commands.root_exists,
        commands.root_version,
        case
            when commands.step_on_row = 1 then commands.state_before.row_exists
            else commands.previous_op <> 'D'
        end as met_row_exists,
        case
            when commands.step_on_row = 1 then commands.state_before.version
            else commands.previous_new_version
        end as met_version,
        case
            when commands.step_on_row = 1 then commands.state_before.row_image
            else commands.{{ 'previous_merged_row' if column_lists else 'previous_typed_row' }}
        end as met_row,
        case
            when commands.prejudged_outcome is not null then null
            when commands.step_on_row = 1
                then
                    {{ judge_command(
                        'commands.op',
                        'commands.state_before.row_exists',
                        'commands.state_before.version',
                        'commands.old_version',
                    ) }}
            else commands.own_write_conflict_type
        end as conflict_type
    from state_before_commands as commands

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

{% if row_filters %}
    partitions_met as (

        -- the row each command met, read by the types of the columns the filters name
        select
            outcomes.*
            {{ qrepl_filter_images(row_filters, 'met_row', 'met') }}
        from outcomes

    ),
{% endif %}

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
        is_last_on_row,
        root_exists,
        root_version,
        is_applied,
        met_row_exists,
        met_version,
        met_row,
        -- the row it met and the row it leaves as the subscription holds them: its columns,
        -- for one that takes some of the article's columns (docs/spec.md §11), else NULL
        {{ qrepl_image_taken(column_lists, 'met_row') }} as met_row_taken,
        {{ qrepl_image_taken(column_lists, 'typed_row') }} as typed_row_taken,
        -- whether the subscriber's partition holds the row the command met (docs/spec.md
        -- §11): a compensating command deletes one it does not; NULL without a filter
        {%- if row_filters %}
            case
                {%- for f in row_filters %}
                    when subscriber = '{{ f.subscriber }}' and article = '{{ f.article.name }}'
                        then met_row_exists and coalesce({{ qrepl_row_filter_sql(f.tree, f.article, 'qrepl_met__' ~ f.article.name) }}, false)
                {%- endfor %}
            end
        {%- else %}
            cast(null as boolean)
        {%- endif %} as met_row_in_partition,
        conflict_type,
        is_logged_conflict,
        outcome,
        policy,
        subscriber_cut,
        {{ qrepl_batch_time() }} as batched_at
    from {{ 'partitions_met' if row_filters else 'outcomes' }}
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
