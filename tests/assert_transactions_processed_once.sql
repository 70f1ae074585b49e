-- A queued transaction is processed exactly once, whatever reruns happen.
select
    subscriber,
    tran_id,
    count(*) as times_processed
from {{ ref('transaction_outcomes') }}
group by subscriber, tran_id
having count(*) > 1
