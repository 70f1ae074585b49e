{{ config(meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_transactions_resolved',
                'qrepl_rows_where': "is_applied"}) }}
/* One row per publisher row a batch changed: its net new state, and the state the batch
   resolved it against (`expected_exists`, `expected_version`). `batch_applied` merges the
   batch into the article tables by compare-and-swap on that expectation; the distribution
   agent reads the article tables' snapshots to send changes to the other subscribers.
   Decides docs/spec.md 5.7 (subscriber_wins). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_transaction_rows as (

    select * from {{ ref('int_transaction_rows') }}
    where batch_id = {{ batch_id }}

),

int_transactions_resolved as (

    select * from {{ ref('int_transactions_resolved') }}
    where batch_id = {{ batch_id }} and {{ qrepl_rows_where() }}

),

applied_rows as (

    select
        int_transaction_rows.*,
        row_number() over (
            partition by {{ qrepl_row_partition('int_transaction_rows') }}
            order by int_transaction_rows.tran_pos desc
        ) as newest_first
    from int_transaction_rows
    inner join int_transactions_resolved
        on int_transaction_rows.tran_pos = int_transactions_resolved.tran_pos

),

final as (

    select
        applied_rows.batch_id,
        applied_rows.article,
        applied_rows.row_key,
        case when applied_rows.produces_absent then 'delete' else 'upsert' end as change_op,
        applied_rows.produced_row as row,
        applied_rows.produced_version as msrepl_tran_version,
        applied_rows.subscriber as changed_by,
        applied_rows.tran_id,
        applied_rows.root_exists as expected_exists,
        applied_rows.root_version as expected_version,
        {{ qrepl_batch_time() }} as changed_at
    from applied_rows
    where applied_rows.newest_first = 1 and {{ batch_not_yet_written(batch_id) }}

)

select * from final
