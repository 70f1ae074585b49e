{{ config(materialized='qrepl_view') }}
/* One row per subscription a batch puts into reinit_pending (publisher_wins_reinit): its
   first conflicting transaction, and the subscription's generation when the batch was cut.
   A view over the batch log (int_queued_commands_judged, int_batch_subscriptions).
   `batch_applied` marks the subscription only if it still has that generation, so finishing
   a crashed run never undoes a reinitialization completed in between.
   Decides docs/spec.md 5.6 (publisher_wins_reinit). */

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}

),

int_batch_subscriptions as (

    select * from {{ ref('int_batch_subscriptions') }}

),

cuts as (

    select distinct
        subscriber,
        tran_id,
        batch_id,
        batched_at
    from int_queued_commands_judged
    where policy = 'publisher_wins_reinit' and tran_pos = subscriber_cut

),

final as (

    select
        cuts.subscriber,
        cuts.batch_id,
        cuts.tran_id,
        concat('conflict in transaction ', cuts.tran_id) as reinit_reason,
        cuts.batched_at as reinit_requested_at,
        int_batch_subscriptions.generation as subscription_generation
    from cuts
    inner join int_batch_subscriptions
        on
            cuts.subscriber = int_batch_subscriptions.subscriber
            and cuts.batch_id = int_batch_subscriptions.batch_id

)

select * from final
