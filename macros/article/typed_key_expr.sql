{% macro typed_key_expr(article, key_json) -%}
    {#- The typed key columns of the key JSON `key_json`, as a struct in key order (NULL fields
        where a value does not fit). A date key is read as text and cast, a tinyint or smallint
        as INT and range checked: from_json throws on 2026-02-30, and
        an out-of-range tinyint is then a plain NULL. -#}
    {%- set key_read = [] -%}
    {%- set key_types = [] -%}
    {%- for k in article.key -%}
        {%- for name, type in article['columns'] if name == k -%}
            {%- do key_read.append(name ~ ' ' ~ _read_type(type)) -%}
            {%- do key_types.append((name, type)) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- set converted = [] -%}
    {%- for name, type in key_types if type in ('date', 'tinyint', 'smallint', 'timestamp', 'timestamp_ntz') -%}{%- do converted.append(name) -%}{%- endfor -%}
    {%- if converted -%}
        {%- set key_values = [] -%}
        {%- for name, type in key_types -%}
            {%- do key_values.append("'" ~ name ~ "', " ~ _typed_value("from_json(" ~ key_json ~ ", '" ~ key_read | join(', ') ~ "')." ~ name, type)) -%}
        {%- endfor -%}
        named_struct({{ key_values | join(', ') }})
    {%- else -%}
        from_json({{ key_json }}, '{{ article_schema_ddl(article, keys_only=true) }}')
    {%- endif -%}
{%- endmacro %}
