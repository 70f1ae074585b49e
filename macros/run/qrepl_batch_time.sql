{% macro qrepl_batch_time() %}
    {#- One timestamp for the whole run (dbt's run_started_at, UTC) unless the env var
        QREPL_BATCH_TIME pins it (scenario replay runs on its own clock). Read only while
        executing, so a new value does not make dbt re-parse the project. -#}
    {%- set pinned = env_var('QREPL_BATCH_TIME', '') if execute else '' -%}
    {%- if pinned -%}
        {%- if not modules.re.fullmatch('\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?', pinned) -%}
            {{ exceptions.raise_compiler_error("qrepl: QREPL_BATCH_TIME must look like 2026-01-31 12:00:00, got '" ~ pinned ~ "'") }}
        {%- endif -%}
        {{ return("cast('" ~ pinned ~ "' as timestamp)") }}
    {%- endif -%}
    {%- if not execute -%}
        {{ return('current_timestamp()') }}
    {%- endif -%}
    {{ return("cast('" ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as timestamp)") }}
{% endmacro %}
