{{ config(meta={'qrepl_skip_when': none}, on_schema_change='append_new_columns') }}
/* One row per queue-reader run (SQL Server's MSqreader_history). Written last, after
   `batch_applied`: a batch without its history row is unfinished and the next run completes
   it. `publisher_rows_kept` counts rows the batch did not write because a publisher-local
   write changed them during the run (that write is kept, as if made after the batch). */
{%- set batch_id = qrepl_batch_id() -%}

with

transaction_outcomes as (

    select * from {{ ref('transaction_outcomes') }}
    where batch_id = {{ batch_id }}

),

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

conflicts as (

    select * from {{ ref('conflicts') }}
    where batch_id = {{ batch_id }}

),

queue_rejects as (

    select * from {{ ref('queue_rejects') }}
    where batch_id = {{ batch_id }}

),

publisher_changes as (

    select * from {{ ref('publisher_changes') }}
    where batch_id = {{ batch_id }}

),

compensating_commands as (

    select * from {{ ref('compensating_commands') }}
    where batch_id = {{ batch_id }}

),

batch_applied as (

    select * from {{ ref('batch_applied') }}
    where batch_id = {{ batch_id }}

),

tagged as (

    -- one row per counted row of the batch, tagged with the mart it comes from: the counts
    -- below are then one aggregate in one Spark job, not a scalar subquery (a job) per count
    select
        'transaction_outcomes' as counted,
        outcome in ('rejected', 'rejected_reinit') as is_rejected,
        cast(0 as bigint) as rows_kept
    from transaction_outcomes
    {%- for mart in ['int_queued_commands_judged', 'conflicts', 'queue_rejects', 'publisher_changes',
        'compensating_commands'] %}
        union all
        select
            '{{ mart }}' as counted,
            false as is_rejected,
            cast(0 as bigint) as rows_kept
        from {{ mart }}
    {%- endfor %}
    union all
    select
        'batch_applied' as counted,
        false as is_rejected,
        rows_kept
    from batch_applied
    where target_table <> 'subscriptions'

),

counts as (

    select
        count_if(counted = 'transaction_outcomes') as transactions_processed,
        count_if(counted = 'int_queued_commands_judged') as commands_processed,
        count_if(counted = 'conflicts') as conflicts,
        count_if(counted = 'transaction_outcomes' and is_rejected) as rejected,
        count_if(counted = 'queue_rejects') as quarantined,
        count_if(counted = 'publisher_changes') as publisher_rows_changed,
        count_if(counted = 'compensating_commands') as compensating_commands,
        coalesce(sum(case when counted = 'batch_applied' then rows_kept end), 0) as publisher_rows_kept,
        greatest(unix_micros(current_timestamp()) - unix_micros({{ qrepl_batch_time() }}), 1)
        / 1000000.0 as elapsed_seconds
    from tagged

),

final as (

    select
        {{ batch_id }} as batch_id,
        {{ qrepl_batch_time() }} as started_at,
        current_timestamp() as finished_at,
        'succeeded' as status,
        transactions_processed,
        commands_processed,
        conflicts,
        rejected,
        quarantined,
        publisher_rows_changed,
        compensating_commands,
        publisher_rows_kept,
        round(commands_processed / elapsed_seconds, 3) as delivery_rate,
        round(transactions_processed / elapsed_seconds, 3) as transaction_rate,
        -- what the run decided at run time (macro qrepl_run_decisions), as JSON
        {{ qrepl_run_decisions_sql() }} as decisions
    from counts
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
