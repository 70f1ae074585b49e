/* The valid transactions of the current batch in processing order, with the ones decided
   before any judging: a stale generation or a subscription awaiting its snapshot. Ephemeral:
   derived inside the judging's statement from the frozen batch (int_batch_commands,
   int_batch_subscriptions) alone, and ordered by a total order of what is frozen there, so a
   run that finishes a crashed batch derives these same positions again.
   Decides docs/spec.md 5.1 (Order), 5.6 (publisher_wins_reinit), 5.8 (Generations). */
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

    -- two groupings, by (transaction, row) and then by transaction, count the rows a
    -- transaction touches; both run on one shuffle by transaction (a count(distinct)
    -- shuffles twice)
    select
        batch_id,
        subscriber,
        tran_id,
        min(queue_order) as queue_order,
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
            min(queue_order) as queue_order,
            min(enqueued_at) as enqueued_at,
            min(tran_seq) as tran_seq,
            min(generation) as generation,
            count(*) as commands_on_row
        from (select * from int_batch_commands distribute by subscriber, tran_id) as commands
        group by batch_id, subscriber, tran_id, article, row_key
    ) as transaction_rows
    group by batch_id, subscriber, tran_id

),

clocked as (

    -- The order the captures reached the queue, never a host's clock (docs/spec.md §5, Order;
    -- qrepl.core.reference.processing_order): by queue_order, the commit that appended the
    -- transaction; within one commit each subscriber's transactions by tran_seq, the
    -- subscribers interleaved by the latest enqueued_at of the subscriber's transactions so far
    -- in that commit (a clock stepping back inside a commit cannot put a subscriber's later
    -- transaction first). A batch log written before queue_order existed has none: 0.
    select
        batch_transactions.*,
        coalesce(batch_transactions.queue_order, 0) as commit_order,
        max(batch_transactions.enqueued_at) over (
            partition by coalesce(batch_transactions.queue_order, 0), batch_transactions.subscriber
            order by batch_transactions.tran_seq, batch_transactions.tran_id
            rows between unbounded preceding and current row
        ) as commit_clock
    from batch_transactions

),

ordered as (

    select
        batch_transactions.batch_id,
        batch_transactions.subscriber,
        batch_transactions.tran_id,
        batch_transactions.queue_order,
        batch_transactions.enqueued_at,
        batch_transactions.tran_seq,
        batch_transactions.generation,
        batch_transactions.command_count,
        batch_transactions.row_count,
        cast(row_number() over (
            order by
                batch_transactions.commit_order,
                batch_transactions.commit_clock,
                batch_transactions.subscriber,
                batch_transactions.tran_seq,
                batch_transactions.tran_id
        ) as int) as tran_pos,
        int_batch_subscriptions.generation as subscription_generation,
        {{ qrepl_prejudged_outcome('batch_transactions.generation', 'int_batch_subscriptions') }}
            as prejudged_outcome
    from clocked as batch_transactions
    inner join int_batch_subscriptions
        on batch_transactions.subscriber = int_batch_subscriptions.subscriber

),

final as (

    select * from ordered

)

select * from final
