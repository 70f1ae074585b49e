{% macro article_schema_ddl(article, keys_only=false) %}
    {#- Spark DDL of an article's columns ('customer_id INT, name STRING'), for from_json. -#}
    {%- set parts = [] -%}
    {%- for name, type in article['columns'] -%}
        {%- if not keys_only or name in article['key'] -%}
            {%- do parts.append(name ~ ' ' ~ (type | upper)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if keys_only -%}
        {#- key order, not column order: the canonical key lists key columns in key order -#}
        {%- set parts = [] -%}
        {%- for k in article['key'] -%}
            {%- for name, type in article['columns'] if name == k -%}
                {%- do parts.append(name ~ ' ' ~ (type | upper)) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(parts | join(', ')) }}
{% endmacro %}
