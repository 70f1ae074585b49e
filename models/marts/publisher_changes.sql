{{ config(materialized='qrepl_view') }}
/* One row per publisher row a batch changed: its net new state, and the state the batch
   resolved it against (`expected_exists`, `expected_version`). A view over the batch log
   (int_queued_commands_judged): each row's last command by the batch's newest applied
   transaction that wrote it. `batch_applied` merges the batch into the article tables by
   compare-and-swap on that expectation; the distribution agent reads the article tables'
   snapshots to send changes to the other subscribers.
   Decides docs/spec.md 5.7 (subscriber_wins). */

with

int_queued_commands_judged as (

    -- the applied transactions' last command on each of their rows: what each leaves there
    select * from {{ ref('int_queued_commands_judged') }}
    where is_applied and is_last_on_row

),

applied_rows as (

    select
        int_queued_commands_judged.*,
        row_number() over (
            partition by batch_id, {{ qrepl_row_partition() }}
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
        batched_at as changed_at
    from applied_rows
    where newest_first = 1

)

select * from final
