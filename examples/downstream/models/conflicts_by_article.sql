-- Every conflict the queue reader has recorded, counted per article and conflict type.
select
    article,
    conflict_type,
    count(*) as conflicts,
    count(distinct subscriber) as subscribers,
    max(detected_at) as last_detected_at
from {{ ref('qrepl', 'conflicts') }}
group by article, conflict_type
