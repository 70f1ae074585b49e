-- The per-article counts add up to every row of qrepl's conflicts mart: a row is returned on a difference.
with counted as (

    select coalesce(sum(conflicts), 0) as conflicts
    from {{ ref('conflicts_by_article') }}

),

recorded as (

    select count(*) as conflicts
    from {{ ref('qrepl', 'conflicts') }}

)

select
    counted.conflicts as counted,
    recorded.conflicts as recorded
from counted
cross join recorded
where counted.conflicts != recorded.conflicts
