-- The per-article counts add up to every row of qrepl's conflicts mart: a row is returned on a difference.
select counted, recorded
from (select coalesce(sum(conflicts), 0) as counted from {{ ref('conflicts_by_article') }})
cross join (select count(*) as recorded from {{ ref('qrepl', 'conflicts') }})
where counted != recorded
