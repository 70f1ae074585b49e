with

replication_queue as (

    -- qrepl_queue_rows: the queue as of one snapshot, only the rows appended since the last
    -- batch's snapshot when that is safe; made by int_batch_commands' pre-hook (macro
    -- macros/queue/qrepl_queue_rows_view.sql) in the session the model runs in
    -- depends_on: {{ source('qrepl', 'replication_queue') }}
    select * from qrepl_queue_rows

),

renamed as (

    select
        subscriber,
        cast(generation as int) as generation,
        tran_id,
        cast(tran_seq as bigint) as tran_seq,
        cast(command_seq as int) as command_seq,
        article,
        upper(op) as op,
        row_key,
        lower(old_version) as old_version,
        lower(new_version) as new_version,
        new_row,
        old_row,
        enqueued_at,
        queue_snapshot_id,
        queue_order
    from replication_queue

)

select * from renamed
