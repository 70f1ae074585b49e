{{ config(materialized='table') }}
{#- One row per publisher row the current batch touches, with the publisher's state before
    the batch: the start of every row's chain. -#}

with

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}

),

int_publisher_rows as (

    select * from {{ ref('int_publisher_rows') }}

),

touched_rows as (

    select distinct
        article,
        row_key
    from int_transaction_rows

),

roots as (

    select
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

)

select * from roots
