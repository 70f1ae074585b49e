{% macro qrepl_queue_rows(queue) %}
    {#- The queue rows a batch may take, as one select (stg_replication_queue's read of its
        source `queue`), read as of one snapshot of the queue, with that snapshot's id as
        `queue_snapshot_id` (int_batch_commands keeps it with every command it takes).

        Every queue row visible at the snapshot the last batch read is in that batch or an
        earlier one. So when that snapshot is known and the queue has only had appends since,
        only the rows appended after it are read, from Iceberg's changelog of the snapshots in
        between (the view qrepl_queue_appended, made by int_batch_commands' pre-hook, macro
        qrepl_queue_changelog_view): the cut's cost follows the new rows, not the queue's
        history. Otherwise (the first batch, a batch log written before queue_snapshot_id
        existed, a queue rewritten, rolled back or expired past that snapshot) the whole queue
        is read, as of the snapshot. Either way int_batch_commands still leaves out the
        commands an earlier batch took. Which read a run made is in its history row
        (decisions.queue_read).

        `queue_order` is the position of the commit that appended the row, SQL Server's
        orderkey: the Iceberg data sequence number of its data file on a whole read, the
        changelog's ordinal of its commit among those since the last batch otherwise. Only its
        order within one batch is used (int_batch_transactions), never a host's clock.

        Outside a run (parse, compile, docs) the whole queue at its current snapshot. -#}
    {%- if not execute -%}
        {#- parsing: dbt's graph (the source's documented columns) is not built yet -#}
        {{ return('select * from ' ~ queue) }}
    {%- endif -%}
    {%- set columns = [] -%}
    {%- for column in _qrepl_queue_columns() -%}{%- do columns.append('queued.' ~ column) -%}{%- endfor -%}
    {%- set position = qrepl_queue_position() if qrepl_is_running() else none -%}
    {%- set queue_order = 'cast(null as bigint)' -%}
    {%- set snapshot = 'cast(null as bigint)' -%}
    {%- if position is none -%}
        {#- outside a run: the whole queue at its current snapshot -#}
        {%- set rows = queue ~ ' as queued' -%}
    {%- elif position.read in ('never appended', 'nothing new') -%}
        {%- set rows = queue ~ ' as queued where false' -%}
    {%- elif position.read == 'appends since snapshot' -%}
        {#- the changelog numbers the appends since the last batch in commit order -#}
        {%- set snapshot = position.snapshot -%}
        {%- set queue_order = 'cast(queued._change_ordinal as bigint)' -%}
        {%- set rows = "qrepl_queue_appended as queued where queued._change_type = 'INSERT'" -%}
    {%- else -%}
        {#- the whole queue: each row's data file, and the Iceberg data sequence number of the
            commit that added it (the queue is append-only: its files are never rewritten) -#}
        {%- set snapshot = position.snapshot -%}
        {%- set queue_order = 'appends.sequence_number' -%}
        {%- set rows = queue ~ ' version as of ' ~ snapshot ~ ' as queued left join (select data_file.file_path, '
            ~ 'min(sequence_number) as sequence_number from ' ~ queue ~ '.entries version as of ' ~ snapshot
            ~ ' where status < 2 group by data_file.file_path) as appends on queued._file = appends.file_path' -%}
    {%- endif -%}
    {{ return('select ' ~ columns | join(', ') ~ ', ' ~ snapshot ~ ' as queue_snapshot_id, '
        ~ queue_order ~ ' as queue_order from ' ~ rows) }}
{% endmacro %}


{% macro _qrepl_queue_columns() %}
    {#- The queue's columns, as documented on the source (models/staging/_sources.yml), which
        python/tests/unit/test_queue_columns.py holds equal to the table the Python layer makes
        (QUEUE_SCHEMA in python/qrepl/storage/warehouse.py): one list, so a column added to the queue
        cannot be silently left out of the batch. -#}
    {%- set columns = [] -%}
    {%- for node in graph.sources.values() if node.source_name == 'qrepl' and node.name == 'replication_queue' -%}
        {%- do columns.extend(node.columns.keys()) -%}
    {%- endfor -%}
    {%- if not columns -%}
        {{ exceptions.raise_compiler_error("qrepl: the source qrepl.replication_queue documents no columns (models/staging/_sources.yml)") }}
    {%- endif -%}
    {{ return(columns) }}
{% endmacro %}
