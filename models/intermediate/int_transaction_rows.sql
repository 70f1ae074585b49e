{{ config(materialized='table') }}
{#- One row per (transaction, publisher row) of the current batch: what the transaction expects
    of the row when it first touches it, what it leaves there, and whether it already
    conflicts with its own writes, and the publisher's state of the row when the batch was cut
    (`root_*`, the same on every command of a row). These are the candidates the resolution
    chains. -#}

with

int_queued_commands_sequenced as (

    select * from {{ ref('int_queued_commands_sequenced') }}

),

final as (

    select
        batch_id,
        tran_pos,
        subscriber,
        tran_id,
        prejudged_outcome,
        article,
        row_key,
        root_exists,
        root_version,
        root_row,
        min(command_seq) as first_command_seq,
        max(case when step_on_row = 1 then op end) = 'I' as expects_absent,
        max(case when step_on_row = 1 then old_version end) as expected_version,
        max(case when steps_after_on_row = 1 then op end) = 'D' as produces_absent,
        max(case when steps_after_on_row = 1 then new_version end) as produced_version,
        max(case when steps_after_on_row = 1 then typed_row end) as produced_row,
        max(own_write_conflict_type is not null) as has_own_write_conflict
    from int_queued_commands_sequenced
    group by
        batch_id, tran_pos, subscriber, tran_id, prejudged_outcome, article, row_key,
        root_exists, root_version, root_row

)

select * from final
