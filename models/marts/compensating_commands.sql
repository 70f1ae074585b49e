{{ config(meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_queued_commands_judged',
                'qrepl_rows_where': "outcome = 'rejected' and step_on_row = 1"}) }}
/* One row per distinct publisher row a rejected (publisher_wins) transaction touched: the
   command that makes the originating subscriber's row equal the publisher's at that point.
   Decides docs/spec.md 5.5 (publisher_wins). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

first_touches_of_rejected as (

    select *
    from int_queued_commands_judged
    where {{ qrepl_rows_where() }}

),

final as (

    select
        subscriber,
        tran_id,
        article,
        row_key,
        case when met_row_exists then 'upsert' else 'delete' end as op,
        case when met_row_exists then met_row end as row,
        batch_id,
        row_number() over (partition by subscriber order by tran_pos, command_seq) as seq
    from first_touches_of_rejected
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
