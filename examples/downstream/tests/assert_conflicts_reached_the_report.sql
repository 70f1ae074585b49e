-- At least var('qrepl_example_min_conflicts') conflicts are counted (default 0: always passes);
-- `make example` runs a workload with conflicts and sets it to 1, so an empty report fails.
with counted as (

    select coalesce(sum(conflicts), 0) as conflicts
    from {{ ref('conflicts_by_article') }}

)

select conflicts
from counted
where conflicts < {{ var('qrepl_example_min_conflicts', 0) | int }}
