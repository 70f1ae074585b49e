{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        on_schema_change='append_new_columns',
        full_refresh=false,
        meta={'qrepl_skip_when': 'nothing_new_queued'},
    )
}}
/* One row per subscription as it stood when the batch was cut. Everything the batch decides
   about subscribers (unknown subscriber, stale generation, awaiting a snapshot) reads this
   frozen copy, so a run finished after a crash decides the same way even if a subscription
   was dropped or reinitialized in between, or its filter changed (its partition_spec, read
   by macro qrepl_batch_row_filters). */
{%- set batch_id = qrepl_batch_id() -%}

with

stg_subscriptions as (

    select * from {{ ref('stg_subscriptions') }}

),

final as (

    select
        {{ batch_id }} as batch_id,
        subscriber,
        publication,
        status,
        generation,
        partition_spec
    from stg_subscriptions
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
