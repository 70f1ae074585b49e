{{ config(post_hook="{{ apply_publisher_changes() }}") }}
{#- One row per publisher row a batch changed: its net new state. The post-hook merges the
    batch into the article tables (deletes really delete); the distribution agent reads it
    to send publisher changes to the other subscribers. -#}
{%- set batch_id = qrepl_batch_id() -%}

with

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}
    where batch_id = {{ batch_id }}

),

int_transactions_resolved as (

    select * from {{ ref('int_transactions_resolved') }}
    where batch_id = {{ batch_id }} and is_applied

),

applied_rows as (

    select
        int_transaction_rows.*,
        row_number() over (
            partition by int_transaction_rows.article, int_transaction_rows.row_key
            order by int_transaction_rows.tran_pos desc
        ) as newest_first
    from int_transaction_rows
    inner join int_transactions_resolved
        on int_transaction_rows.tran_pos = int_transactions_resolved.tran_pos

),

final as (

    select
        batch_id,
        article,
        row_key,
        case when produces_absent then 'delete' else 'upsert' end as change_op,
        produced_row as row,
        produced_version as msrepl_tran_version,
        subscriber as changed_by,
        tran_id,
        {{ qrepl_batch_time() }} as changed_at
    from applied_rows
    where newest_first = 1 and {{ batch_not_yet_written(batch_id) }}

)

select * from final
