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


{% macro row_json_expr(article, prefix, version_expr) %}
    {#- JSON of every article column (nulls kept) plus msrepl_tran_version: the row image format
        of conflicts, compensating commands and publisher changes. -#}
    {%- set parts = [] -%}
    {%- for name, type in article['columns'] -%}
        {%- do parts.append("'" ~ name ~ "', " ~ prefix ~ name) -%}
    {%- endfor -%}
    {%- do parts.append("'msrepl_tran_version', " ~ version_expr) -%}
    to_json(named_struct({{ parts | join(', ') }}), map('ignoreNullFields', 'false'))
{%- endmacro %}


{% macro publisher_rows_sql(config) %}
    {#- One row per publisher row of every article: its canonical key, row image and version. -#}
    {%- for article in config['articles'] %}
    select
        '{{ article.name }}' as article,
        to_json(named_struct(
            {%- for k in article.key %}'{{ k }}', {{ k }}{{ ', ' if not loop.last }}{% endfor -%}
        )) as row_key,
        {{ row_json_expr(article, '', 'msrepl_tran_version') }} as row_json,
        msrepl_tran_version
    from {{ qrepl_relation(article.name) }}
    {% if not loop.last %}union all{% endif %}
    {%- else %}
    select
        cast(null as string) as article,
        cast(null as string) as row_key,
        cast(null as string) as row_json,
        cast(null as string) as msrepl_tran_version
    where false
    {%- endfor %}
{% endmacro %}


{% macro queued_rows_typed_sql(config, relation) %}
    {#- The queued rows of `relation` with their new_row parsed by the article's types:
        article_known, json_ok (new_row is a JSON object), typed_key (canonical key of new_row)
        and typed_row (the row image the publisher would hold). -#}
    {%- set names = [] -%}
    {%- for article in config['articles'] %}
        {%- do names.append("'" ~ article.name ~ "'") %}
    select
        queued.*,
        true as article_known,
        json_object_keys(queued.new_row) is not null as json_ok,
        to_json(from_json(queued.new_row, '{{ article_schema_ddl(article, keys_only=true) }}')) as typed_key,
        case when queued.new_row is not null then
            {{ row_json_expr(article, 'from_json(queued.new_row, \'' ~ article_schema_ddl(article) ~ '\').', 'queued.new_version') }}
        end as typed_row
    from {{ relation }} as queued
    where queued.article = '{{ article.name }}'
    union all
    {%- endfor %}
    select
        queued.*,
        false as article_known,
        false as json_ok,
        cast(null as string) as typed_key,
        cast(null as string) as typed_row
    from {{ relation }} as queued
    {%- if names %}
    where queued.article is null or queued.article not in ({{ names | join(', ') }})
    {%- endif %}
{% endmacro %}
