with

subscriptions as (

    select * from {{ source('qrepl', 'subscriptions') }}

),

renamed as (

    select
        subscriber,
        publication,
        status,
        cast(generation as int) as generation,
        reinit_requested_at,
        reinit_reason,
        -- the row filters (docs/spec.md §11), read through the row's JSON: a subscriptions
        -- table written before partitions existed has no such column, and reads as none
        get_json_object(to_json(struct(subscriptions.*)), '$.partition_spec') as partition_spec
    from subscriptions

)

select * from renamed
