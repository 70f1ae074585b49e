with

replication_queue as (

    -- the queue as of one snapshot: only the rows appended since the last batch's snapshot
    -- when the queue has had only appends since, else the whole queue (macro qrepl_queue_rows;
    -- which read a run made is in queue_reader_history.decisions)
    {{ qrepl_queue_rows(source('qrepl', 'replication_queue')) }}

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
