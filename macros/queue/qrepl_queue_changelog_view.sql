{% macro qrepl_queue_changelog_view() %}
    {#- int_batch_commands' pre-hook: when this run reads only the rows appended to the queue
        since the last batch's snapshot (macro qrepl_queue_rows), makes Iceberg's changelog of
        the snapshots in between, the temporary view `qrepl_queue_appended`, in the session the
        model runs in (a Thrift server gives each node its own session, so no other node could
        make it). Any other read is plain SQL on the source, and this hook does nothing. -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set position = qrepl_queue_position() -%}
    {%- if position.read != 'appends since snapshot' -%}
        {{ return('') }}
    {%- endif -%}
    {{ return("call spark_catalog.system.create_changelog_view(table => '" ~ qrepl_relation('replication_queue')
        ~ "', changelog_view => 'qrepl_queue_appended', options => map('start-snapshot-id', '" ~ position.since
        ~ "', 'end-snapshot-id', '" ~ position.snapshot ~ "'))") }}
{% endmacro %}
