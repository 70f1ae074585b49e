-- The set-based resolution's applied set and the judging of every command agree: an applied
-- transaction has no conflicting command, and a rejected one (publisher_wins) has at least one.
with

judged as (

    select * from {{ ref('int_queued_commands_judged') }}

),

per_transaction as (

    select
        batch_id,
        subscriber,
        tran_id,
        outcome,
        policy,
        max(is_applied) as is_applied,
        max(conflict_type is not null) as has_conflict
    from judged
    group by batch_id, subscriber, tran_id, outcome, policy

)

select *
from per_transaction
where
    (is_applied and outcome not in ('applied', 'applied_with_conflicts'))
    or (not is_applied and outcome in ('applied', 'applied_with_conflicts'))
    or (policy = 'publisher_wins' and outcome = 'applied' and has_conflict)
    or (outcome = 'rejected' and not has_conflict)
