{{
    config(
        post_hook="{{ purge_expired_conflicts() }}",
        meta={'qrepl_skip_when': 'no_rows_for_batch', 'qrepl_rows_from': 'int_queued_commands_judged',
              'qrepl_rows_where': 'is_logged_conflict'},
    )
}}
/* One row per conflicting queued command (SQL Server's conflict tables).
   Decides docs/spec.md 5.3 (Conflict codes). */
{%- set publication = qrepl_config() -%}
{%- set batch_id = qrepl_batch_id() -%}
/* a subscription that takes some of an article's columns sees its conflict rows with those
   (docs/spec.md §11): int_queued_commands_judged's met_row_taken and typed_row_taken */
{%- set column_lists = qrepl_batch_column_lists('batch_is_empty') -%}

with

int_queued_commands_judged as (

    select * from {{ ref('int_queued_commands_judged') }}
    where batch_id = {{ batch_id }}

),

logged as (

    select * from int_queued_commands_judged
    where {{ qrepl_rows_where() }}

),

final as (

    select
        md5(concat_ws('|', subscriber, tran_id, cast(command_seq as string), cast(batch_id as string)))
            as conflict_id,
        batch_id,
        '{{ publication.publication }}' as publication,
        article,
        row_key,
        subscriber,
        tran_id,
        command_seq,
        conflict_type,
        {{ conflict_type_code('conflict_type') }} as conflict_type_code,
        {{ conflict_reason_text('conflict_type') }} as reason_text,
        policy,
        case when policy = 'subscriber_wins' then 'subscriber' else 'publisher' end as winner,
        case when met_row_exists then {{ 'coalesce(met_row_taken, met_row)' if column_lists else 'met_row' }} end
            as publisher_row,
        case when op <> 'D' then {{ 'coalesce(typed_row_taken, typed_row)' if column_lists else 'typed_row' }} end
            as subscriber_row,
        case when met_row_exists then met_version end as publisher_version,
        old_version,
        new_version,
        {{ qrepl_batch_time() }} as detected_at
    from logged
    where {{ batch_not_yet_written(batch_id) }}

)

select * from final
