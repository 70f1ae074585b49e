{{ config(materialized='qrepl_view') }}
/* One row per processed queued transaction and its outcome: a view over the batch log
   (int_queued_commands_judged), whose every command carries its transaction's outcome. */

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}

),

final as (

    select distinct
        subscriber,
        tran_id,
        batch_id,
        tran_pos,
        outcome,
        policy,
        batched_at as processed_at
    from int_queued_commands_judged

)

select * from final
