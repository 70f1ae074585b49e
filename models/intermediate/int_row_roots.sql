{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        full_refresh=false,
        tblproperties={'format-version': '2'},
    )
}}
{#- One row per publisher row the batch touches, with the publisher's state before the batch:
    the start of every row's chain. Frozen per batch: the resolution, the judging and the
    compare-and-swap at the publisher all use these versions, so a run finished after a crash
    resolves against what the batch first saw, whatever the publisher holds by then. -#}
{%- set batch_id = qrepl_batch_id() -%}

with

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}
    where batch_id = {{ batch_id }}

),

touched_rows as (

    select distinct
        article,
        row_key
    from int_transaction_rows

),

int_publisher_rows as (
    {{ publisher_rows_sql(qrepl_config(), 'touched_rows') }}
),

roots as (

    select
        {{ batch_id }} as batch_id,
        touched_rows.article,
        touched_rows.row_key,
        int_publisher_rows.row_key is not null as root_exists,
        int_publisher_rows.msrepl_tran_version as root_version,
        int_publisher_rows.row_json as root_row
    from touched_rows
    left join int_publisher_rows
        on
            touched_rows.article = int_publisher_rows.article
            and touched_rows.row_key = int_publisher_rows.row_key

),

final as (

    select * from roots
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
