{% macro row_json_expr(article, prefix, version_expr) %}
    {#- JSON of every article column (nulls kept) plus msrepl_tran_version: the row image format
        of conflicts, compensating commands and publisher changes. -#}
    {%- set parts = [] -%}
    {%- for name, type in article['columns'] -%}
        {%- do parts.append("'" ~ name ~ "', " ~ prefix ~ name) -%}
    {%- endfor -%}
    {%- do parts.append("'msrepl_tran_version', " ~ version_expr) -%}
    to_json(named_struct({{ parts | join(', ') }}), {{ qrepl_json_options(keep_nulls=true) }})
{%- endmacro %}
