{% macro qrepl_queue_position() %}
    {#- Where the queue stands for this run: `snapshot`, the queue snapshot the batch reads
        (none: nothing was ever appended to the queue), `since`, the snapshot the latest
        batch read if the queue has had only appends since (none otherwise: see
        qrepl_queue_rows), and `read`, the one answer every reader of the position branches
        on (decided here, and only here):
          'never appended'          no snapshot: the batch takes nothing
          'nothing new'             since == snapshot: every visible row is in an earlier batch
          'appends since snapshot'  Iceberg's changelog of the snapshots since `since`
          'whole queue'             the queue as of `snapshot`
        Read once per run (qrepl_run_cache): first by
        int_batch_subscriptions' materialization (macro qrepl_nothing_new_queued), so the
        queue's snapshot is fixed before the subscriptions are copied, then by
        stg_replication_queue's read and int_batch_commands' pre-hook. -#}
    {{ return(qrepl_run_cache('queue_position', _qrepl_queue_position_read)) }}
{% endmacro %}


{% macro _qrepl_queue_position_read() %}
    {#- qrepl_queue_position's reads of the queue's and the batch log's metadata. -#}
    {%- set table = qrepl_relation('replication_queue') -%}
    {%- set current = run_query("select snapshot_id from " ~ table ~ ".refs where name = 'main'") -%}
    {%- if current.rows | length == 0 -%}
        {{ return({'snapshot': none, 'since': none, 'read': 'never appended'}) }}
    {%- endif -%}
    {%- set snapshot = current.rows[0][0] | int -%}
    {%- set since = _qrepl_last_queue_snapshot(table) -%}
    {%- if since == snapshot -%}
        {%- set read = 'nothing new' -%}
    {%- elif since is not none -%}
        {%- set read = 'appends since snapshot' -%}
    {%- else -%}
        {%- set read = 'whole queue' -%}
    {%- endif -%}
    {{ return({'snapshot': snapshot, 'since': since, 'read': read}) }}
{% endmacro %}


{% macro _qrepl_last_queue_snapshot(table) %}
    {#- The queue snapshot the latest batch that recorded one read, if every snapshot of the
        queue since then is an append still in its history; none otherwise. -#}
    {%- set log = qrepl_relation('int_batch_commands') -%}
    {%- if not qrepl_relation_exists(log) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set names = adapter.get_columns_in_relation(log) | map(attribute='name') | map('lower') | list -%}
    {%- if 'queue_snapshot_id' not in names -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set last = run_query('select max_by(queue_snapshot_id, batch_id) from ' ~ log ~ ' where queue_snapshot_id is not null') -%}
    {%- if last.rows[0][0] is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set since = last.rows[0][0] | int -%}
    {%- set check -%}
        with snapshots as (
            select history.snapshot_id, history.made_current_at, history.is_current_ancestor, snapshots.operation
            from {{ table }}.history as history
            left join {{ table }}.snapshots as snapshots on history.snapshot_id = snapshots.snapshot_id
        ),
        since as (
            select made_current_at from snapshots where snapshot_id = {{ since }} and is_current_ancestor
        )
        select
            (select count(*) from since) as found,
            (select count(*) from snapshots, since
                where snapshots.is_current_ancestor and snapshots.snapshot_id != {{ since }}
                    and snapshots.made_current_at >= since.made_current_at
                    and not (snapshots.operation <=> 'append')) as not_appends
    {%- endset -%}
    {%- set found = run_query(check) -%}
    {%- if found.rows[0][0] != 1 or found.rows[0][1] != 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(since) }}
{% endmacro %}
