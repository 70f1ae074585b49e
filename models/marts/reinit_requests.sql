{{ config(meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_queued_commands_judged',
                'qrepl_rows_where': "policy = 'publisher_wins_reinit' and tran_pos = subscriber_cut"}) }}
/* One row per subscription a batch puts into reinit_pending (publisher_wins_reinit): its
   first conflicting transaction, and the subscription's generation when the batch was cut.
   `batch_applied` marks the subscription only if it still has that generation, so finishing
   a crashed run never undoes a reinitialization completed in between.
   Decides docs/spec.md 5.6 (publisher_wins_reinit). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

int_batch_subscriptions as (

    select * from {{ ref('int_batch_subscriptions') }}
    where batch_id = {{ batch_id }}

),

cuts as (

    select distinct
        subscriber,
        tran_id,
        batch_id
    from int_queued_commands_judged
    where {{ qrepl_rows_where() }}

),

final as (

    select
        cuts.subscriber,
        cuts.batch_id,
        cuts.tran_id,
        concat('conflict in transaction ', cuts.tran_id) as reinit_reason,
        {{ qrepl_batch_time() }} as reinit_requested_at,
        int_batch_subscriptions.generation as subscription_generation
    from cuts
    inner join int_batch_subscriptions
        on cuts.subscriber = int_batch_subscriptions.subscriber
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
