{% macro qrepl_is_running() %}
    {#- True while `dbt run` / `dbt build` executes models: the only time the queue reader may
        write (compile, docs generate and parse must not resolve or merge anything). -#}
    {%- if not execute -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(flags.WHICH in ['run', 'build']) }}
{% endmacro %}
