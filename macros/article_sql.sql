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


{% macro publisher_rows_sql(config, touched) %}
    {#- One row per publisher row of every article whose canonical key is among `touched`
        (a relation or CTE with article, row_key): its key, row image and version. The join
        runs on the typed key columns (from_json of the key), so only the rows found are
        serialized; comparing their canonical key text with row_key keeps it exact. -#}
    {%- for article in config['articles'] %}
    select
        '{{ article.name }}' as article,
        touched_keys.row_key,
        {{ row_json_expr(article, 'publisher.', 'publisher.msrepl_tran_version') }} as row_json,
        publisher.msrepl_tran_version
    from {{ qrepl_relation(article.name) }} as publisher
    inner join (
        select
            row_key,
            from_json(row_key, '{{ article_schema_ddl(article, keys_only=true) }}') as typed
        from {{ touched }}
        where article = '{{ article.name }}'
    ) as touched_keys
        on
            {%- for k in article.key %}
            publisher.{{ k }} = touched_keys.typed.{{ k }}{{ ' and' if not loop.last }}
            {%- endfor %}
    where to_json(named_struct(
        {%- for k in article.key %}'{{ k }}', publisher.{{ k }}{{ ', ' if not loop.last }}{% endfor -%}
    )) = touched_keys.row_key
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
    {#- The queued rows of `relation` with what the checks of int_batch_commands need, by the
        article's types (python/qrepl/model.py spells the same rules: parse_json_object,
        queued_value_ok, canonical_key):
        article_known; for row_key: key_json_ok (one JSON object), key_field_count,
        key_missing_column, key_null_value, canonical_key (the canonical text of its key);
        for new_row: row_json_ok, row_extra_columns, row_missing_column, row_null_key_value,
        row_wrong_type, typed_key (canonical key of new_row) and typed_row (the row image the
        publisher would hold). Values are only ever read from columns: a date is parsed as text
        and cast (from_json throws on an impossible date such as 2026-02-30). -#}
    {%- set names = [] -%}
    {%- for article in config['articles'] %}
        {%- do names.append("'" ~ article.name ~ "'") %}
        {%- set typed_ddl = [] -%}
        {%- set text_ddl = [] -%}
        {%- set string_columns = [] -%}
        {%- set values = [] -%}
        {%- set all_columns = [] -%}
        {%- for name, type in article['columns'] -%}
            {%- do typed_ddl.append(name ~ ' ' ~ ('STRING' if type == 'date' else type | upper)) -%}
            {%- do text_ddl.append(name ~ ' STRING') -%}
            {%- do all_columns.append("'" ~ name ~ "'") -%}
            {%- if type == 'string' -%}{%- do string_columns.append(name) -%}{%- endif -%}
            {%- do values.append("'" ~ name ~ "', " ~ ('cast(row_typed.' ~ name ~ ' as date)' if type == 'date' else 'row_typed.' ~ name)) -%}
        {%- endfor %}
    select
        parsed.queued_row.*,
        true as article_known,
        {{ _json_object_ok('parsed.key_fields', 'parsed.key_shape') }} as key_json_ok,
        size(parsed.key_fields) as key_field_count,
        not ({% for k in article.key %}array_contains(parsed.key_fields, '{{ k }}'){{ ' and ' if not loop.last }}{% endfor %}) as key_missing_column,
        ({% for k in article.key %}parsed.key_text.{{ k }} is null{{ ' or ' if not loop.last }}{% endfor %}) as key_null_value,
        to_json(parsed.key_typed) as canonical_key,
        {{ _json_object_ok('parsed.row_fields', 'parsed.row_shape') }} as row_json_ok,
        size(array_except(parsed.row_fields, array({{ all_columns | join(', ') }}))) > 0 as row_extra_columns,
        not ({% for name, type in article.columns %}array_contains(parsed.row_fields, '{{ name }}'){{ ' and ' if not loop.last }}{% endfor %}) as row_missing_column,
        ({% for k in article.key %}parsed.row_text.{{ k }} is null{{ ' or ' if not loop.last }}{% endfor %}) as row_null_key_value,
        (
            length(parsed.row_shape) - length(replace(parsed.row_shape, '{', '')) > 1
            or instr(parsed.row_shape, '[') > 0
            {%- for name, type in article.columns %}
            or (parsed.row_text.{{ name }} is not null and {{ _wrong_type_when(name, type) }})
            {%- endfor %}
        ) as row_wrong_type,
        to_json(named_struct(
            {%- for k in article.key %}'{{ k }}', parsed.row_values.{{ k }}{{ ', ' if not loop.last }}{% endfor -%}
        )) as typed_key,
        case when parsed.queued_row.new_row is not null then
            {{ row_json_expr(article, 'parsed.row_values.', 'parsed.queued_row.new_version') }}
        end as typed_row
    from (
        select
            with_typed.*,
            named_struct({{ values | join(', ') }}) as row_values
        from (
            select
                struct(queued.*) as queued_row,
                json_object_keys(queued.row_key) as key_fields,
                {{ _json_shape('queued.row_key') }} as key_shape,
                from_json(queued.row_key, '{{ article_schema_ddl(article, keys_only=true) }}') as key_typed,
                from_json(queued.row_key, '{% for k in article.key %}{{ k }} STRING{{ ", " if not loop.last }}{% endfor %}') as key_text,
                json_object_keys(queued.new_row) as row_fields,
                {{ _json_shape('queued.new_row') }} as row_shape,
                from_json(queued.new_row, '{{ typed_ddl | join(", ") }}') as row_typed,
                from_json(queued.new_row, '{{ text_ddl | join(", ") }}') as row_text,
                {%- if string_columns %}
                from_json(queued.new_row, '{% for c in string_columns %}{{ c }} DOUBLE{{ ", " if not loop.last }}{% endfor %}') as row_as_double,
                from_json(queued.new_row, '{% for c in string_columns %}{{ c }} BOOLEAN{{ ", " if not loop.last }}{% endfor %}') as row_as_boolean
                {%- else %}
                cast(null as string) as row_as_double,
                cast(null as string) as row_as_boolean
                {%- endif %}
            from {{ relation }} as queued
            where queued.article = '{{ article.name }}'
        ) as with_typed
    ) as parsed
    union all
    {%- endfor %}
    select
        queued.*,
        false as article_known,
        false as key_json_ok,
        cast(null as int) as key_field_count,
        cast(null as boolean) as key_missing_column,
        cast(null as boolean) as key_null_value,
        cast(null as string) as canonical_key,
        false as row_json_ok,
        cast(null as boolean) as row_extra_columns,
        cast(null as boolean) as row_missing_column,
        cast(null as boolean) as row_null_key_value,
        cast(null as boolean) as row_wrong_type,
        cast(null as string) as typed_key,
        cast(null as string) as typed_row
    from {{ relation }} as queued
    {%- if names %}
    where queued.article is null or queued.article not in ({{ names | join(', ') }})
    {%- endif %}
{% endmacro %}


{% macro _json_shape(text) -%}
    {#- The JSON text with every string literal emptied: what is left is its structure. -#}
    regexp_replace({{ text }}, '"(?:[^"\\\\]++|\\\\.)*+"', '""')
{%- endmacro %}


{% macro _json_object_ok(fields, shape) -%}
    {#- Exactly one JSON object: Spark parses it, no field twice, and (checked on its shape) no
        single-quoted names, nothing before or after it, brackets balanced. -#}
    coalesce(
        {{ fields }} is not null
        and size({{ fields }}) = size(array_distinct({{ fields }}))
        and instr({{ shape }}, "'") = 0
        and {{ shape }} rlike '^\\s*\\{[\\s\\S]*\\}\\s*$'
        and not {{ shape }} rlike '[}\\]]\\s*[^,}\\]\\s]'
        and length({{ shape }}) - length(replace({{ shape }}, '{', '')) = length({{ shape }}) - length(replace({{ shape }}, '}', ''))
        and length({{ shape }}) - length(replace({{ shape }}, '[', '')) = length({{ shape }}) - length(replace({{ shape }}, ']', '')),
        false
    )
{%- endmacro %}


{% macro _wrong_type_when(name, type) -%}
    {#- True when the non-null JSON value of column `name` does not fit `type` (model.queued_value_ok). -#}
    {%- if type == 'string' -%}
        ((parsed.row_as_double.{{ name }} is not null and not isnan(parsed.row_as_double.{{ name }})
          and abs(parsed.row_as_double.{{ name }}) <> double('Infinity'))
         or parsed.row_as_boolean.{{ name }} is not null)
    {%- elif type == 'double' -%}
        (parsed.row_typed.{{ name }} is null or isnan(parsed.row_typed.{{ name }})
         or abs(parsed.row_typed.{{ name }}) = double('Infinity'))
    {%- elif type == 'date' -%}
        (not parsed.row_text.{{ name }} rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}$'
         or cast(parsed.row_text.{{ name }} as date) is null)
    {%- elif type.startswith('decimal') -%}
        (parsed.row_typed.{{ name }} is null
         or not parsed.row_text.{{ name }} rlike '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$')
    {%- else -%}
        parsed.row_typed.{{ name }} is null
    {%- endif -%}
{%- endmacro %}
