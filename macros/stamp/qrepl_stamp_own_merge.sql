{% macro qrepl_stamp_own_merge(article, before) %}
    {#- After batch_applied's compare-and-swap MERGE into `article`'s table: what to record in
        publisher_stamps so the publisher's trigger (qrepl_stamp_publisher) does not read that
        MERGE's data files again at the next run or distribution, or none. Every row the MERGE
        writes carries a version of this batch, so the trigger would read them only to find
        nothing to stamp: after a 1,000-row batch that cost 2.1 s of the next run's start on
        10M rows (bench/STAMP.md), and it grew with the batch.
        `before` is _qrepl_stamp_position(article), read just before the MERGE. The MERGE's
        snapshot is recorded as examined only when nothing else can be in it:
          * before the MERGE, the table stood at the snapshot the last stamp examined (no
            outside commit waits to be examined);
          * after it, the table's current snapshot is the child of that one (the MERGE's own
            commit, the only one since: every MERGE commits a snapshot, empty or not).
        A stamp recorded in between by `qrepl distribute` examined one of those two snapshots
        (had it stamped a row, its MERGE would be a commit in between): both records are true,
        and whichever the next stamp reads, it examines nothing it should not skip.
        Otherwise none: the next stamp examines the MERGE as before, so being wrong here can
        only cost time, and a crash between the MERGE and the record costs the same.
        The record's batch id is the next batch's: for the trigger, a version written by a batch
        from that id on is fresh and needs no look-up, and this batch's versions are held in
        the table as of the recorded snapshot, so a later writer that keeps one of them is
        still stamped. -#}
    {%- if before is none or before.current is none or before.current != before.since -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set table = qrepl_article_relation(article) -%}
    {%- set now = run_query("select snapshots.snapshot_id, snapshots.parent_id from " ~ table ~ ".refs as refs inner join "
        ~ table ~ ".snapshots as snapshots on refs.snapshot_id = snapshots.snapshot_id where refs.name = 'main'").rows -%}
    {%- if now | length == 0 or now[0][1] is none or (now[0][1] | int) != before.current -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return("('" ~ article['name'] ~ "', " ~ (now[0][0] | int) ~ ", " ~ ((qrepl_batch_id() | int) + 1) ~ ", "
        ~ (before.seq + 1) ~ ", 0, current_timestamp())") }}
{% endmacro %}


{% macro _qrepl_stamp_position(article) %}
    {#- Before batch_applied's MERGE into `article`'s table, in one query: its current snapshot
        (`current`), and the snapshot the publisher's trigger last examined (`since`) with that
        record's stamp_seq (`seq`), for qrepl_stamp_own_merge. publisher_stamps exists: the
        run's start (qrepl_stamp_publisher) creates it. -#}
    {%- set table = qrepl_article_relation(article) -%}
    {%- set row = run_query("select (select snapshot_id from " ~ table ~ ".refs where name = 'main'), "
        ~ "max_by(snapshot_id, stamp_seq), coalesce(max(stamp_seq), 0) from " ~ qrepl_relation('publisher_stamps')
        ~ " where article = '" ~ article['name'] ~ "'").rows[0] -%}
    {{ return({'current': (row[0] | int) if row[0] is not none else none,
               'since': (row[1] | int) if row[1] is not none else none, 'seq': row[2] | int}) }}
{% endmacro %}
