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
    {#- qrepl_batch_is_empty's answer, from the one query qrepl_batch_has_rows makes of
        int_batch_commands for this batch (its key '*': any row at all), so that table is
        asked once per run for both. -#}
    {%- set empty = not _qrepl_batch_rows('int_batch_commands')['*'] -%}
    {%- if empty -%}
        {{ log("qrepl: batch " ~ qrepl_batch_id() ~ " has no commands: the models after the cut are not run", info=true) }}
    {%- endif -%}
    {{ return(empty) }}
{% endmacro %}
