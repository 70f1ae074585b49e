-- Each subscriber's transactions by outcome: how often its changes were applied or rejected.
select
    subscriber,
    count(*) as transactions,
    count_if(outcome = 'applied') as applied,
    count_if(outcome = 'applied_with_conflicts') as applied_with_conflicts,
    count_if(outcome in ('rejected', 'rejected_reinit')) as rejected
from {{ ref('qrepl', 'transaction_outcomes') }}
group by subscriber
