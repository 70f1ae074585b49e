{{ config(meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_batch_commands',
                'qrepl_rows_where': "reject_reason is not null"}) }}
/* One row per quarantined queue row, with the reason; never blocks the good rows.
   Decides docs/spec.md 5.9 (Quarantine). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_batch_commands as (

    select * from {{ ref('int_batch_commands') }}
    where batch_id = {{ batch_id }} and {{ qrepl_rows_where() }}

),

final as (

    select
        subscriber,
        generation,
        tran_id,
        tran_seq,
        command_seq,
        article,
        op,
        row_key,
        old_version,
        new_version,
        new_row,
        old_row,
        enqueued_at,
        reject_reason as reason,
        batch_id,
        batched_at as rejected_at
    from int_batch_commands
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
