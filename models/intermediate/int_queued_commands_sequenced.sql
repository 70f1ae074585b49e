/* Each valid command of the current batch with the effect of the previous command of the
   same transaction on the same row: later commands on a row are judged against the
   transaction's own write (docs/spec.md §5), which is known without looking at the publisher.
   Decides docs/spec.md 5.4 (A transaction sees its own writes). */
{%- set batch_id = qrepl_batch_id() -%}

with

int_batch_commands as (

    select * from {{ ref('int_batch_commands') }}

),

int_batch_transactions as (

    select * from {{ ref('int_batch_transactions') }}
    where batch_id = {{ batch_id }}

),

batch_commands as (

    -- partitioned by tran_pos alone: that one shuffle serves the windows below (by
    -- transaction and row), int_transaction_rows' grouping, and int_queued_commands_judged's
    -- join to the decisions and its windows by transaction (docs/stack.md note 21). The lookup of
    -- tran_pos joins on (tran_id, subscriber), in that order, so its sorts are led by the
    -- column that tells transactions apart (note 22)
    select
        int_batch_transactions.tran_pos,
        int_batch_transactions.prejudged_outcome,
        int_batch_commands.*
    from int_batch_commands
    inner join int_batch_transactions
        on
            int_batch_commands.tran_id = int_batch_transactions.tran_id
            and int_batch_commands.subscriber = int_batch_transactions.subscriber
    where int_batch_commands.batch_id = {{ batch_id }} and int_batch_commands.reject_reason is null
    distribute by int_batch_transactions.tran_pos

),

sequenced as (

    select
        batch_commands.*,
        row_number() over (
            partition by tran_pos, article, row_key order by command_seq
        ) as step_on_row,
        lag(op) over (partition by tran_pos, article, row_key order by command_seq) as previous_op,
        lag(new_version) over (
            partition by tran_pos, article, row_key order by command_seq
        ) as previous_new_version,
        lag(typed_row) over (
            partition by tran_pos, article, row_key order by command_seq
        ) as previous_typed_row,
        -- the transaction's last command on the row: what it leaves there
        lead(command_seq) over (
            partition by tran_pos, article, row_key order by command_seq
        ) is null as is_last_on_row
    from batch_commands

),

with_own_write_conflicts as (

    select
        sequenced.*,
        case
            when step_on_row > 1 then
                {{ judge_command('op', "previous_op <> 'D'", 'previous_new_version', 'old_version') }}
        end as own_write_conflict_type
    from sequenced

)

select * from with_own_write_conflicts
