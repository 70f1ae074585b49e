{#- The valid transactions of the current batch in processing order, with the ones decided
    before any judging: a stale generation or a subscription awaiting its snapshot. -#}
{%- set batch_id = qrepl_batch_id() -%}

with

int_batch_commands as (

    select * from {{ ref('int_batch_commands') }}

),

stg_subscriptions as (

    select * from {{ ref('stg_subscriptions') }}

),

batch_transactions as (

    select
        batch_id,
        subscriber,
        tran_id,
        min(enqueued_at) as enqueued_at,
        min(tran_seq) as tran_seq,
        min(generation) as generation,
        count(*) as command_count,
        count(distinct article, row_key) as row_count
    from int_batch_commands
    where batch_id = {{ batch_id }} and reject_reason is null
    group by batch_id, subscriber, tran_id

),

ordered as (

    select
        batch_transactions.*,
        row_number() over (
            order by
                batch_transactions.enqueued_at,
                batch_transactions.subscriber,
                batch_transactions.tran_seq,
                batch_transactions.tran_id
        ) as tran_pos,
        case
            when batch_transactions.generation < stg_subscriptions.generation then 'rejected_reinit'
            when stg_subscriptions.status = 'reinit_pending' then 'rejected_reinit'
        end as prejudged_outcome
    from batch_transactions
    inner join stg_subscriptions
        on batch_transactions.subscriber = stg_subscriptions.subscriber

)

select * from ordered
