/* Decides docs/spec.md 5.4 (A transaction sees its own writes).
   One row per (transaction, publisher row) of the current batch: what the transaction expects
   of the row when it first touches it, what it leaves there, and whether it already
   conflicts with its own writes, and the publisher's state of the row when the batch was cut
   (`root_*`, the same on every command of a row). These are the candidates the resolution
   chains.
   Grouped by (tran_pos, article, row_key) alone: the sequencing's window has already sorted
   the rows that way, so the grouping adds no sort. What the transaction expects is its first
   command's on the row (min_by), what it leaves its last command's (max_by); every other
   column is the same on all commands of a group (the transaction's, or the row's state at
   the cut), hence any_value. */

with

int_queued_commands_sequenced as (

    select * from {{ ref('int_queued_commands_sequenced') }}

),

final as (

    select
        any_value(batch_id) as batch_id,
        tran_pos,
        any_value(subscriber) as subscriber,
        any_value(tran_id) as tran_id,
        any_value(prejudged_outcome) as prejudged_outcome,
        article,
        row_key,
        any_value(root_exists) as root_exists,
        any_value(root_version) as root_version,
        any_value(root_row) as root_row,
        min(command_seq) as first_command_seq,
        min_by(op, command_seq) = 'I' as expects_absent,
        min_by(old_version, command_seq) as expected_version,
        max_by(op, command_seq) = 'D' as produces_absent,
        max_by(new_version, command_seq) as produced_version,
        max_by(typed_row, command_seq) as produced_row,
        max(own_write_conflict_type is not null) as has_own_write_conflict
    from int_queued_commands_sequenced
    group by tran_pos, article, row_key

)

select * from final
