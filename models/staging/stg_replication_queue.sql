with

replication_queue as (

    select * from {{ source('qrepl', 'replication_queue') }}

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
        enqueued_at
    from replication_queue

)

select * from renamed
