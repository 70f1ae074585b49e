-- Under publisher_wins every distinct row a rejected transaction touched gets exactly one
-- compensating command addressed to its own subscriber. Returns the rows that break this.
with

judged as (

    select * from {{ ref('int_queued_commands_judged') }}

),

compensating_commands as (

    select * from {{ ref('compensating_commands') }}

),

touched_rows_of_rejected as (

    select distinct
        batch_id,
        subscriber,
        tran_id,
        article,
        row_key
    from judged
    where outcome = 'rejected'

),

compensations_per_row as (

    select
        batch_id,
        subscriber,
        tran_id,
        article,
        row_key,
        count(*) as compensations
    from compensating_commands
    group by batch_id, subscriber, tran_id, article, row_key

),

mismatches as (

    select
        touched.batch_id,
        touched.subscriber,
        touched.tran_id,
        touched.article,
        touched.row_key,
        coalesce(compensations_per_row.compensations, 0) as compensations
    from touched_rows_of_rejected as touched
    full outer join compensations_per_row
        on
            touched.batch_id = compensations_per_row.batch_id
            and touched.subscriber = compensations_per_row.subscriber
            and touched.tran_id = compensations_per_row.tran_id
            and touched.article = compensations_per_row.article
            and touched.row_key = compensations_per_row.row_key
    where touched.tran_id is null or coalesce(compensations_per_row.compensations, 0) != 1

)

select * from mismatches
