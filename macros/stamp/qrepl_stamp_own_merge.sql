{% macro qrepl_stamp_own_merge(article) %}
    {#- After batch_applied's compare-and-swap MERGE into `article`'s table: what to record in
        publisher_stamps so the publisher's trigger (qrepl_stamp_publisher) does not read that
        MERGE's data files again at the next run or distribution, or none. Every row the MERGE
        writes carries a version of this batch, so the trigger would read them only to find
        nothing to stamp, at a cost that grows with the batch (docs/performance.md,
        "Thresholds and choices measured").
        The MERGE's snapshot is recorded as examined only when nothing else can be in it: its
        parent is the snapshot this run's start examined (qrepl_stamp_publisher keeps it, and
        its stamp_seq, for the run), so no other commit came between that examination and the
        MERGE (every MERGE commits a snapshot, empty or not). No query before the MERGE.
        A stamp recorded in between by `qrepl distribute` either found nothing new (and
        recorded nothing) or examined a later snapshot, which is then the MERGE's parent, and
        this check fails. Otherwise none: the next stamp examines the MERGE as before, so being
        wrong here can only cost time, and a crash between the MERGE and the record costs the
        same.
        The record's batch id is the next batch's: for the trigger, a version written by a batch
        from that id on is fresh and needs no look-up, and this batch's versions are held in
        the table as of the recorded snapshot, so a later writer that keeps one of them is
        still stamped. -#}
    {%- set start = qrepl_run_state('stamp_examined', {}).get(article['name']) -%}
    {%- if start is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set table = qrepl_article_relation(article) -%}
    {%- set now = run_query("select snapshots.snapshot_id, snapshots.parent_id from " ~ table ~ ".refs as refs inner join "
        ~ table ~ ".snapshots as snapshots on refs.snapshot_id = snapshots.snapshot_id where refs.name = 'main'").rows -%}
    {%- if now | length == 0 or now[0][1] is none or (now[0][1] | int) != start.snapshot -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return("('" ~ article['name'] ~ "', " ~ (now[0][0] | int) ~ ", " ~ ((qrepl_batch_id() | int) + 1) ~ ", "
        ~ (start.seq + 1) ~ ", 0, current_timestamp())") }}
{% endmacro %}
