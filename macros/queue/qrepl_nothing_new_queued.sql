{% macro qrepl_nothing_new_queued() %}
    {#- True when this run's batch cut can take nothing: the queue was never appended to, or
        nothing was appended since the snapshot the latest batch read (so every visible queue
        row is in an earlier batch). int_batch_subscriptions and int_batch_commands are then
        not run at all (meta qrepl_skip_when: nothing_new_queued, read by the incremental
        materialization in macros/materializations/incremental_spark.sql): they would insert
        no row. -#}
    {{ return(qrepl_run_cache('nothing_new_queued', _qrepl_nothing_new_queued_read)) }}
{% endmacro %}


{% macro _qrepl_nothing_new_queued_read() %}
    {#- qrepl_nothing_new_queued's answer, logged once per run. -#}
    {%- set nothing = qrepl_queue_position().read in ('never appended', 'nothing new') -%}
    {#- a run with nothing to do said so in its own line (qrepl_run_is_idle) -#}
    {%- if nothing and not qrepl_run_is_idle() -%}
        {{ log("qrepl: nothing queued since the last batch: the batch cut is not run", info=true) }}
    {%- endif -%}
    {{ return(nothing) }}
{% endmacro %}
