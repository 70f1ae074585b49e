{{ config(materialized='qrepl_view') }}
/* One row per quarantined queue row, with the reason; never blocks the good rows. A view over
   the frozen batches (int_batch_commands), where each quarantined command keeps its reason.
   Decides docs/spec.md 5.9 (Quarantine). */

with

int_batch_commands as (

    select * from {{ ref('int_batch_commands') }}
    where reject_reason is not null

),

final as (

    select
        subscriber,
        generation,
        tran_id,
        tran_seq,
        command_seq,
        article,
        op,
        row_key,
        old_version,
        new_version,
        new_row,
        old_row,
        enqueued_at,
        reject_reason as reason,
        batch_id,
        batched_at as rejected_at
    from int_batch_commands

)

select * from final
