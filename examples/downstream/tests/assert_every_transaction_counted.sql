-- Each subscriber's outcomes add up to its transactions: a row is returned on a difference.
select subscriber
from {{ ref('subscriber_outcomes') }}
where applied + applied_with_conflicts + rejected != transactions
