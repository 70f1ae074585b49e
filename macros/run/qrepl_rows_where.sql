{% macro qrepl_rows_where() %}
    {#- The condition a `no_rows_for_batch` mart selects its source's rows by (its
        `meta.qrepl_rows_where`), in the model's own SQL: the same text qrepl_batch_has_rows
        asks about. -#}
    {%- if not execute -%}
        {{ return('true') }}
    {%- endif -%}
    {%- set condition = (config.get('meta') or {}).get('qrepl_rows_where') -%}
    {%- if not condition -%}
        {{ exceptions.raise_compiler_error("qrepl: " ~ model.name ~ " has no meta.qrepl_rows_where") }}
    {%- endif -%}
    {#- not "(condition)" alone: Spark reads `from t where (c)` as the alias `where` with a
        column list -#}
    {{ return('true and (' ~ condition ~ ')') }}
{% endmacro %}
