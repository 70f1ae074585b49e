{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        meta={'qrepl_skip_when': 'batch_is_empty'},
    )
}}
{#- The valid transactions of the current batch in processing order, with the ones decided
    before any judging: a stale generation or a subscription awaiting its snapshot. Frozen per
    batch (positions and prejudged outcomes never move once computed): the stored decisions
    of a crashed run are joined to these same positions when the next run finishes it. -#}
{%- set batch_id = qrepl_batch_id() -%}

with

int_batch_commands as (

    select * from {{ ref('int_batch_commands') }}
    where batch_id = {{ batch_id }} and reject_reason is null

),

int_batch_subscriptions as (

    select * from {{ ref('int_batch_subscriptions') }}
    where batch_id = {{ batch_id }}

),

batch_transactions as (

    {#- two groupings, by (transaction, row) and then by transaction, count the rows a
        transaction touches; both run on one shuffle by transaction (a count(distinct)
        shuffles twice) -#}
    select
        batch_id,
        subscriber,
        tran_id,
        min(enqueued_at) as enqueued_at,
        min(tran_seq) as tran_seq,
        min(generation) as generation,
        sum(commands_on_row) as command_count,
        count(*) as row_count
    from (
        select
            batch_id,
            subscriber,
            tran_id,
            min(enqueued_at) as enqueued_at,
            min(tran_seq) as tran_seq,
            min(generation) as generation,
            count(*) as commands_on_row
        from (select * from int_batch_commands distribute by subscriber, tran_id) as commands
        group by batch_id, subscriber, tran_id, article, row_key
    ) as transaction_rows
    group by batch_id, subscriber, tran_id

),

ordered as (

    select
        batch_transactions.*,
        cast(row_number() over (
            order by
                batch_transactions.enqueued_at,
                batch_transactions.subscriber,
                batch_transactions.tran_seq,
                batch_transactions.tran_id
        ) as int) as tran_pos,
        int_batch_subscriptions.generation as subscription_generation,
        case
            when batch_transactions.generation < int_batch_subscriptions.generation then 'rejected_reinit'
            when int_batch_subscriptions.status = 'reinit_pending' then 'rejected_reinit'
        end as prejudged_outcome
    from batch_transactions
    inner join int_batch_subscriptions
        on batch_transactions.subscriber = int_batch_subscriptions.subscriber

),

final as (

    select * from ordered
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
