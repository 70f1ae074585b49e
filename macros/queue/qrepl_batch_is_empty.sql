{% macro qrepl_batch_is_empty() %}
    {#- True when this run's batch has no command at all in int_batch_commands, valid or
        quarantined. Every per-batch model downstream then writes no row, so it is not run
        (meta qrepl_skip_when: batch_is_empty, read by the incremental materialization in
        macros/materializations/incremental_spark.sql): a run with nothing queued commits
        nothing to them.
        Read once per run (qrepl_run_cache) by the first of them, after int_batch_commands has
        run. False outside `dbt run` / `dbt build`. -#}
    {%- if not qrepl_is_running() -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_is_empty', _qrepl_batch_is_empty_read)) }}
{% endmacro %}


{% macro _qrepl_batch_is_empty_read() %}
    {#- qrepl_batch_is_empty's read of int_batch_commands (looked up by name, not ref(): the
        node asking may depend on it only through other models). -#}
    {%- set commands = adapter.get_relation(database=none, schema=_qrepl_identifier(target.schema, 'schema'), identifier='int_batch_commands') -%}
    {%- if commands is none -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set found = run_query('select 1 from ' ~ commands ~ ' where batch_id = ' ~ (qrepl_batch_id() | int) ~ ' limit 1') -%}
    {%- if found.rows | length == 0 -%}
        {{ log("qrepl: batch " ~ qrepl_batch_id() ~ " has no commands: the models after the cut are not run", info=true) }}
    {%- endif -%}
    {{ return(found.rows | length == 0) }}
{% endmacro %}
