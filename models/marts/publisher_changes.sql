{{ config(meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_queued_commands_judged',
                'qrepl_rows_where': "is_applied"}) }}
/* One row per publisher row a batch changed: its net new state, and the state the batch
   resolved it against (`expected_exists`, `expected_version`). `batch_applied` merges the
   batch into the article tables by compare-and-swap on that expectation; the distribution
   agent reads the article tables' snapshots to send changes to the other subscribers. A
   table, unlike the four other marts derived from the log: a run reads it four times
   (qrepl_batch_writes, the MERGE, batch_applied, queue_reader_history), and as a view each
   read ran its window again (batch_applied 3.7 s against 2.3 s at the warm 1k batch, 6.3 s
   against 3.1 s at 100k; docs/performance.md, "What a run writes").
   Decides docs/spec.md 5.7 (subscriber_wins). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_judged as (

    -- the applied transactions' last command on each of their rows: what each leaves there
    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }} and {{ qrepl_rows_where() }} and is_last_on_row

),

applied_rows as (

    select
        int_queued_commands_judged.*,
        row_number() over (
            partition by {{ qrepl_row_partition() }}
            order by tran_pos desc
        ) as newest_first
    from int_queued_commands_judged

),

final as (

    select
        batch_id,
        article,
        row_key,
        case when op = 'D' then 'delete' else 'upsert' end as change_op,
        typed_row as row,
        new_version as msrepl_tran_version,
        subscriber as changed_by,
        tran_id,
        root_exists as expected_exists,
        root_version as expected_version,
        {{ qrepl_batch_time() }} as changed_at
    from applied_rows
    where newest_first = 1 and {{ batch_not_yet_written(batch_id) }}

)

select * from final
