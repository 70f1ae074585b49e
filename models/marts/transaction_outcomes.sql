/* One row per processed queued transaction and its outcome. */
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

transactions as (

    select distinct
        subscriber,
        tran_id,
        batch_id,
        tran_pos,
        outcome,
        policy
    from int_queued_commands_judged

),

final as (

    select
        subscriber,
        tran_id,
        batch_id,
        tran_pos,
        outcome,
        policy,
        {{ qrepl_batch_time() }} as processed_at
    from transactions
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
