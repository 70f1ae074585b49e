{% macro qrepl_batch_id() %}
    {#- The batch this run processes: one more than the last finished batch in
        queue_reader_history. A crashed run is finished by the next one under the same id.
        Read once per run, by the first node that asks (after on-run-start took the run lock),
        and kept for the others (qrepl_run_cache): queue_reader_history is the run's last
        node, so the answer cannot change within a run. -#}
    {%- if not execute -%}
        {{ return(1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_id', _qrepl_batch_id_read)) }}
{% endmacro %}


{% macro _qrepl_batch_id_read() %}
    {#- qrepl_batch_id's read of queue_reader_history. -#}
    {%- set history = qrepl_relation('queue_reader_history') -%}
    {%- if not qrepl_relation_exists(history) -%}
        {{ return(1) }}
    {%- endif -%}
    {%- set result = run_query('select coalesce(max(batch_id), 0) + 1 from ' ~ history) -%}
    {{ return(result.rows[0][0] | int) }}
{% endmacro %}
