{{
    config(
        pre_hook=[
            "{{ apply_publisher_changes(qrepl_batch_id()) }}",
            "{{ apply_reinit_requests(qrepl_batch_id()) }}",
        ],
    )
}}
-- depends_on: {{ ref('transaction_outcomes') }}
-- depends_on: {{ ref('conflicts') }}
-- depends_on: {{ ref('compensating_commands') }}
-- depends_on: {{ ref('queue_rejects') }}
-- depends_on: {{ ref('int_batch_commands') }}
/* One row per table a batch writes outside its own marts: each article's publisher table,
   then the subscriptions. This is the run's only step that changes anything a subscriber or
   a publisher-side reader sees, and it runs after every decision of the batch is stored (it
   depends on all of them: if any model fails, dbt skips it and nothing is applied). Its
   pre-hooks do the writes in a fixed order (compare-and-swap MERGEs into the article tables,
   then the reinit requests); the row counts what was written and what was kept because the
   publisher changed it during the run. A rerun after a crash repeats the hooks, which change
   nothing already applied. */
{%- set batch_id = qrepl_batch_id() -%}

with

publisher_changes as (

    select * from {{ ref('publisher_changes') }}
    where batch_id = {{ batch_id }}

),

reinit_requests as (

    select * from {{ ref('reinit_requests') }}
    where batch_id = {{ batch_id }}

),

changed_keys as (  -- noqa: ST03

    -- read by publisher_rows_sql below
    select
        article,
        row_key
    from publisher_changes

),

int_publisher_rows as (
    {{ publisher_rows_sql(qrepl_config(), 'changed_keys') }}
),

stg_subscriptions as (

    select * from {{ ref('stg_subscriptions') }}

),

publisher_rows_settled as (

    select
        publisher_changes.article as target_table,
        case
            when publisher_changes.change_op = 'delete' then int_publisher_rows.row_key is null
            else int_publisher_rows.msrepl_tran_version <=> publisher_changes.msrepl_tran_version
        end as is_written
    from publisher_changes
    left join int_publisher_rows
        on
            publisher_changes.article = int_publisher_rows.article
            and publisher_changes.row_key = int_publisher_rows.row_key

),

subscriptions_settled as (

    select
        'subscriptions' as target_table,
        stg_subscriptions.status <=> 'reinit_pending'
        and stg_subscriptions.generation <=> reinit_requests.subscription_generation as is_written
    from reinit_requests
    left join stg_subscriptions
        on reinit_requests.subscriber = stg_subscriptions.subscriber

),

settled as (

    select * from publisher_rows_settled
    union all
    select * from subscriptions_settled

),

final as (

    select
        {{ batch_id }} as batch_id,
        target_table,
        cast(count(*) as bigint) as rows_requested,
        cast(count_if(is_written) as bigint) as rows_written,
        cast(count_if(not is_written) as bigint) as rows_kept,
        current_timestamp() as applied_at
    from settled
    where {{ batch_not_yet_written(batch_id) }}
    group by target_table

)

select * from final
