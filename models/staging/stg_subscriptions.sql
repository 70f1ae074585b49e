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
        reinit_reason
    from subscriptions

)

select * from renamed
