{% macro _qrepl_run_lock_token() %}
    {#- The lock row's token: `qrepl run`'s (QREPL_RUN_TOKEN, 32 hex digits, what its lease
        keeper renews), else this invocation's id. Only safe characters reach the SQL text. -#}
    {%- set named = env_var('QREPL_RUN_TOKEN', '') -%}
    {%- if modules.re.fullmatch('[0-9a-f]{32}', named) -%}
        {{ return(named) }}
    {%- endif -%}
    {{ return(modules.re.sub('[^A-Za-z0-9-]', '_', invocation_id)[:64]) }}
{% endmacro %}
