{{ config(post_hook="{{ apply_reinit_requests() }}") }}
{#- One row per subscription a batch put into reinit_pending (publisher_wins_reinit): its first
    conflicting transaction. The post-hook marks the subscription. -#}
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

cuts as (

    select distinct
        subscriber,
        tran_id,
        batch_id
    from int_queued_commands_judged
    where policy = 'publisher_wins_reinit' and tran_pos = subscriber_cut

),

final as (

    select
        subscriber,
        batch_id,
        tran_id,
        concat('conflict in transaction ', tran_id) as reinit_reason,
        {{ qrepl_batch_time() }} as reinit_requested_at
    from cuts
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
