{% macro qrepl_batch_id() %}
    {#- The batch this run processes: one more than the last finished batch in
        queue_reader_history. A crashed run is finished by the next one under the same id. -#}
    {%- if not execute -%}
        {{ return(1) }}
    {%- endif -%}
    {%- set history = adapter.get_relation(database=none, schema=_qrepl_identifier(target.schema, 'schema'), identifier='queue_reader_history') -%}
    {%- if history is none -%}
        {{ return(1) }}
    {%- endif -%}
    {%- set result = run_query('select coalesce(max(batch_id), 0) + 1 from ' ~ history) -%}
    {{ return(result.rows[0][0] | int) }}
{% endmacro %}


{% macro qrepl_batch_time() %}
    {#- One timestamp for the whole run (dbt's run_started_at, UTC) unless the env var
        QREPL_BATCH_TIME pins it (scenario replay runs on its own clock). Read only while
        executing, so a new value does not make dbt re-parse the project. -#}
    {%- set pinned = env_var('QREPL_BATCH_TIME', '') if execute else '' -%}
    {%- if pinned -%}
        {%- if not modules.re.match('^\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?$', pinned) -%}
            {{ exceptions.raise_compiler_error("qrepl: QREPL_BATCH_TIME must look like 2026-01-31 12:00:00, got '" ~ pinned ~ "'") }}
        {%- endif -%}
        {{ return("cast('" ~ pinned ~ "' as timestamp)") }}
    {%- endif -%}
    {%- if not execute -%}
        {{ return('current_timestamp()') }}
    {%- endif -%}
    {{ return("cast('" ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as timestamp)") }}
{% endmacro %}


{% macro batch_not_yet_written(batch_id) %}
    {#- Guard for the per-batch incremental models: a rerun after a crash must not write a
        batch twice. Iceberg inserts are atomic, so a batch is in a table whole or not at all. -#}
    {%- if is_incremental() -%}
        not exists (select 1 from {{ this }} as already_written where already_written.batch_id = {{ batch_id }})
    {%- else -%}
        true
    {%- endif -%}
{% endmacro %}
