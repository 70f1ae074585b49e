{{ config(materialized='qrepl_view') }}
/* One row per distinct publisher row a rejected (publisher_wins) transaction touched: the
   command that makes the originating subscriber's row equal the publisher's at that point.
   A view over the batch log (int_queued_commands_judged): a rejected transaction's first
   command on each row, with the state it met there: the publisher's row, or a delete when
   there was none or the subscriber's partition does not hold it (met_row_in_partition false,
   docs/spec.md §11).
   Decides docs/spec.md 5.5 (publisher_wins). */

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}

),

first_touches_of_rejected as (

    select
        *,
        -- read through the row's JSON: a log written before partitions existed has no
        -- met_row_in_partition column until its next batch, and every row of it holds its row
        coalesce(
            get_json_object(to_json(struct(int_queued_commands_judged.*)), '$.met_row_in_partition'),
            'true'
        ) = 'true' as partition_holds_met_row,
        -- the row as the subscription holds it: its columns, for one that takes some of the
        -- article's (docs/spec.md §11; NULL otherwise, and absent from a log of before)
        coalesce(
            get_json_object(to_json(struct(int_queued_commands_judged.*)), '$.met_row_taken'),
            met_row
        ) as met_row_held
    from int_queued_commands_judged
    where outcome = 'rejected' and step_on_row = 1

),

final as (

    select
        subscriber,
        tran_id,
        article,
        row_key,
        case when met_row_exists and partition_holds_met_row then 'upsert' else 'delete' end as op,
        case when met_row_exists and partition_holds_met_row then met_row_held end as row,
        batch_id,
        row_number() over (partition by subscriber, batch_id order by tran_pos, command_seq) as seq
    from first_touches_of_rejected

)

select * from final
