{% macro queued_rows_typed_sql(config, relation) %}
    {#- The queued rows of `relation` with what the checks of int_batch_commands need, by the
        article's types (python/qrepl/core/values.py and rows.py spell the same rules: parse_json_object,
        queued_value_ok, canonical_key):
        article_known; for row_key: key_json_ok (one JSON object), key_field_count,
        key_missing_column, key_null_value, canonical_key (the canonical text of its key);
        for new_row: row_json_ok, row_extra_columns, row_missing_column, row_null_key_value,
        row_wrong_type, typed_key (canonical key of new_row) and typed_row (the row image the
        publisher would hold). Values are only ever read from columns: a date is parsed as text
        and cast (from_json throws on an impossible date such as 2026-02-30).

        Parsed once per command: the key and the row by the article's types (a string or date
        column as text, a decimal column also as text). Text that is exactly what Spark writes
        back from that parse (`key_canonical`: the canonical key, every key value present;
        `row_canonical`: every column in column order, as capture writes a row) is one flat
        JSON object holding each expected field once, so the checks of its structure (field
        names, duplicates, nesting, what surrounds it) are known without looking further. Only
        other text is parsed for its field names and shape, in the projection below the checks
        (a CASE per row, so each is computed once and only for that text). Every further parse
        answers a question only a doubtful value raises, and sits where Spark evaluates it for
        that value alone (the right side of AND, see _json_field and _wrong_type_when): whether
        a NULL typed value was JSON null or a value of the wrong type, and whether a string
        column's number-like or true/false text was a JSON string. -#}
    {%- set names = [] -%}
    {%- for article in config['articles'] %}{% do names.append("'" ~ article.name ~ "'") %}{% endfor -%}
    {%- for article in config['articles'] %}
        {#- The first article's branch also carries the commands of no known article (NULL or
            another name), with article_known false and every parsed column as the branch for
            none would give it (false or NULL): the queue is read once per article, not once
            more for the commands nobody expects. -#}
        {%- if loop.first -%}
            {%- set known = "parsed.queued_row.article = '" ~ article.name ~ "'" -%}
        {%- else -%}
            {%- set known = none -%}
        {%- endif -%}
        {%- set typed_ddl = [] -%}
        {%- set decimal_ddl = [] -%}
        {%- set values = [] -%}
        {%- set as_written = [] -%}
        {%- set all_columns = [] -%}
        {%- for name, type in article['columns'] -%}
            {%- do typed_ddl.append(name ~ ' ' ~ _read_type(type)) -%}
            {%- if type.startswith('decimal') -%}{%- do decimal_ddl.append(name ~ ' STRING') -%}{%- endif -%}
            {%- do all_columns.append("'" ~ name ~ "'") -%}
            {%- do values.append("'" ~ name ~ "', " ~ _typed_value('row_typed.' ~ name, type)) -%}
            {%- do as_written.append("'" ~ name ~ "', " ~ ('row_decimal_text.' if type.startswith('decimal') else 'row_typed.') ~ name) -%}
        {%- endfor %}
    select
        parsed.queued_row.*,
        {{ _when_known(known, 'true', 'false') }} as article_known,
        {{ _when_known(known, 'parsed.key_canonical or ' ~ _json_object_ok('parsed.key_fields', 'parsed.key_shape'), 'false') }} as key_json_ok,
        {{ _when_known(known, 'case when parsed.key_canonical then ' ~ (article.key | length) ~ ' else size(parsed.key_fields) end') }} as key_field_count,
        {{ _when_known(known, 'not parsed.key_canonical and not (' ~ _all_contained('parsed.key_fields', article.key) ~ ')') }} as key_missing_column,
        {%- set key_null = [] -%}
        {%- for k in article.key -%}
            {%- do key_null.append('(parsed.key_typed.' ~ k ~ ' is null and ' ~ _json_field('parsed.queued_row.row_key', k) ~ ' is null)') -%}
        {%- endfor %}
        {{ _when_known(known, '(' ~ key_null | join(' or ') ~ ')') }} as key_null_value,
        {{ _when_known(known, 'parsed.canonical_key') }} as canonical_key,
        {{ _when_known(known, 'parsed.row_canonical or ' ~ _json_object_ok('parsed.row_fields', 'parsed.row_shape'), 'false') }} as row_json_ok,
        {{ _when_known(known, 'not parsed.row_canonical and size(array_except(parsed.row_fields, array(' ~ all_columns | join(', ') ~ '))) > 0') }} as row_extra_columns,
        {%- set column_names = [] -%}
        {%- for name, type in article.columns -%}{%- do column_names.append(name) -%}{%- endfor %}
        {{ _when_known(known, 'not parsed.row_canonical and not (' ~ _all_contained('parsed.row_fields', column_names) ~ ')') }} as row_missing_column,
        {%- set row_key_null = [] -%}
        {%- for k in article.key -%}
            {%- do row_key_null.append('(parsed.row_typed.' ~ k ~ ' is null and ' ~ _json_field('parsed.queued_row.new_row', k) ~ ' is null)') -%}
        {%- endfor %}
        {{ _when_known(known, '(' ~ row_key_null | join(' or ') ~ ')') }} as row_null_key_value,
        {%- set wrong = [] -%}
        {%- for name, type in article.columns -%}
            {%- do wrong.append(_wrong_type_when(name, type)) -%}
        {%- endfor %}
        {{ _when_known(known, "((not parsed.row_canonical and (length(parsed.row_shape) - length(replace(parsed.row_shape, '{', '')) > 1 or instr(parsed.row_shape, '[') > 0)) or " ~ wrong | join(' or ') ~ ')') }} as row_wrong_type,
        {%- set key_values = [] -%}
        {%- for k in article.key -%}{%- do key_values.append("'" ~ k ~ "', parsed.row_values." ~ k) -%}{%- endfor %}
        {{ _when_known(known, 'to_json(named_struct(' ~ key_values | join(', ') ~ '), ' ~ qrepl_json_options() ~ ')') }} as typed_key,
        {{ _when_known(known, 'case when parsed.queued_row.new_row is not null then ' ~ row_json_expr(article, 'parsed.row_values.', 'parsed.queued_row.new_version') ~ ' end') }} as typed_row
    from (
        select
            canonical.*,
            case when not key_canonical then json_object_keys(queued_row.row_key) end as key_fields,
            case when not key_canonical then {{ _json_shape('queued_row.row_key') }} end as key_shape,
            case when not row_canonical then json_object_keys(queued_row.new_row) end as row_fields,
            case when not row_canonical then {{ _json_shape('queued_row.new_row') }} end as row_shape
        from (
            select
                with_typed.*,
                named_struct({{ values | join(', ') }}) as row_values,
                to_json(key_typed, {{ qrepl_json_options() }}) as canonical_key,
                coalesce(
                    to_json(key_typed, {{ qrepl_json_options() }}) = queued_row.row_key
                    {%- for k in article.key %}
                    and key_typed.{{ k }} is not null
                    {%- endfor %},
                    false
                ) as key_canonical,
                coalesce(
                    to_json(named_struct({{ as_written | join(', ') }}), {{ qrepl_json_options(keep_nulls=true) }})
                    = queued_row.new_row,
                    false
                ) as row_canonical
            from (
                select
                    struct(queued.*) as queued_row,
                    {{ typed_key_expr(article, 'queued.row_key') }} as key_typed,
                    from_json(queued.new_row, '{{ typed_ddl | join(", ") }}') as row_typed,
                    {%- if decimal_ddl %}
                    from_json(queued.new_row, '{{ decimal_ddl | join(", ") }}') as row_decimal_text
                    {%- else %}
                    cast(null as string) as row_decimal_text
                    {%- endif %}
                from {{ relation }} as queued
                where
                    queued.article = '{{ article.name }}'
                    {%- if loop.first %}
                    or queued.article is null or queued.article not in ({{ names | join(', ') }})
                    {%- endif %}
            ) as with_typed
        ) as canonical
    ) as parsed
    {% if not loop.last %}union all{% endif %}
    {%- else %}
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
    {%- endfor %}
{% endmacro %}


{% macro _when_known(known, expr, otherwise='null') -%}
    {#- `expr` in a branch of queued_rows_typed_sql that holds only its article's commands
        (`known` is none); in the branch that also holds the commands of no known article,
        `expr` for its own and `otherwise` for those. -#}
    {%- if known is none -%}
        {{ expr }}
    {%- else -%}
        case when coalesce({{ known }}, false) then {{ expr }} else {{ otherwise }} end
    {%- endif -%}
{%- endmacro %}


{% macro _all_contained(fields, names) -%}
    {#- every name of `names` is an element of the array `fields` -#}
    {%- for name in names -%}array_contains({{ fields }}, '{{ name }}'){{ ' and ' if not loop.last }}{%- endfor -%}
{%- endmacro %}


{% macro _json_shape(text) -%}
    {#- The JSON text with every string literal emptied: what is left is its structure. A flat
        object (one pair of braces, no brackets, no single quote: what capture writes) is
        returned as it is, without the rewrite: emptying its strings cannot change any check
        made on the shape (_json_object_ok, the nesting test of row_wrong_type), since it
        keeps the leading brace, the closing brace that only whitespace follows, and adds no
        brace, bracket or quote. -#}
    case
        when {{ text }} rlike '^\\s*\\{[^{}\\[\\]\\x27]*\\}\\s*$' then {{ text }}
        else regexp_replace({{ text }}, '"(?:[^"\\\\]++|\\\\.)*+"', '""')
    end
{%- endmacro %}


{% macro _json_object_ok(fields, shape) -%}
    {#- Exactly one JSON object: Spark parses it, no field twice, and (checked on its shape) no
        single-quoted names, nothing before or after it, brackets balanced. `(?s:.*)` (any
        character, line breaks too) and not `[\s\S]*`: the same match, but Java's regex runs the
        class union per character (docs/performance.md, "Thresholds and choices measured"). -#}
    coalesce(
        {{ fields }} is not null
        and size({{ fields }}) = size(array_distinct({{ fields }}))
        and instr({{ shape }}, "'") = 0
        and {{ shape }} rlike '^\\s*\\{(?s:.*)\\}\\s*$'
        and not {{ shape }} rlike '[}\\]]\\s*[^,}\\]\\s]'
        and length({{ shape }}) - length(replace({{ shape }}, '{', '')) = length({{ shape }}) - length(replace({{ shape }}, '}', ''))
        and length({{ shape }}) - length(replace({{ shape }}, '[', '')) = length({{ shape }}) - length(replace({{ shape }}, ']', '')),
        false
    )
{%- endmacro %}


{% macro _json_field(json, name, type='STRING') -%}
    {#- Field `name` of the JSON object `json` read as `type`; as STRING, its text (a number or
        true/false as written, a string unquoted), NULL when the field is absent or JSON null.
        One more parse: used only on the right of AND, after a cheaper test, so it runs for
        doubtful values alone. -#}
    from_json({{ json }}, '{{ name }} {{ type }}').{{ name }}
{%- endmacro %}


{% macro _wrong_type_when(name, type) -%}
    {#- True when column `name` of new_row holds a non-null JSON value that does not fit `type`
        (model.queued_value_ok). A typed value that is not NULL came from a non-null value of a
        fitting kind; a NULL one is a JSON null (fits) or a value of the wrong kind, which only
        its text tells apart. A string column's typed value is its text: it was not a JSON
        string only when that text could be a number or true/false, and only then is the row
        parsed again to tell (a finite DOUBLE or a BOOLEAN there means it was not a string). -#}
    {%- set typed = 'parsed.row_typed.' ~ name -%}
    {%- set json = 'parsed.queued_row.new_row' -%}
    {%- if type == 'string' -%}
        ({{ typed }} is not null and {{ _not_json_string(typed, json, name) }})
    {%- elif type == 'binary' -%}
        {#- a JSON string of canonical base64: 1234 or true read as text would pass the pattern -#}
        ({{ typed }} is not null
         and (not {{ typed }} rlike '{{ _base64_pattern() }}' or {{ _not_json_string(typed, json, name) }}))
    {%- elif type in ('timestamp', 'timestamp_ntz') -%}
        {#- a JSON string (a number or true/false never matches the pattern) that is a real
            moment, in years 0001..9999 in UTC for a timestamp -#}
        ({{ typed }} is not null and {{ _typed_value(typed, type) }} is null)
    {%- elif type in ('double', 'float') -%}
        {#- finite, or non-finite as exactly the JSON string to_json writes ("NaN", "Infinity",
            "-Infinity": a value the publisher can hold; model.queued_value_ok): Spark's
            from_json also reads "+INF" and the like, and a float beyond its range as Infinity -#}
        (({{ typed }} is null and {{ _json_field(json, name) }} is not null)
         or coalesce((isnan({{ typed }}) or abs({{ typed }}) = double('Infinity'))
                     and not coalesce({{ _json_field(json, name) }} in ('NaN', 'Infinity', '-Infinity'), false), false))
    {%- elif type in ('tinyint', 'smallint') -%}
        {#- read as INT and range checked: out of range is a wrong type -#}
        (({{ typed }} is null and {{ _json_field(json, name) }} is not null)
         or coalesce({{ typed }} not between {{ _int_range(type) }}, false))
    {%- elif type == 'date' -%}
        ({{ typed }} is not null
         and (not {{ typed }} rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}\\z'
              or cast({{ typed }} as date) is null))
    {%- elif type.startswith('decimal') -%}
        {#- A decimal fits only exactly (model.decimal_value): its text is a JSON string's content
            or, for a JSON number, the number as written (read as STRING Spark would give the
            number's double text, so it is taken from the row text itself). -#}
        {%- set text = 'parsed.row_decimal_text.' ~ name -%}
        {%- set written = "case when parsed.row_canonical then " ~ text
            ~ " when " ~ _json_field(json, name, 'DOUBLE') ~ " is not null then nullif(regexp_extract("
            ~ json ~ ", '" ~ _json_number_pattern(name) ~ "', 1), '') else " ~ text ~ " end" -%}
        ({{ text }} is not null
         and ({{ typed }} is null
              or not {{ _decimal_fits(written, type) }}))
    {%- else -%}
        ({{ typed }} is null and {{ _json_field(json, name) }} is not null)
    {%- endif -%}
{%- endmacro %}


{% macro _not_json_string(typed, json, name) -%}
    {#- Whether a value read as text (`typed`, not null) was not a JSON string: only text that
        could be a number or true/false can have been one, and only then is the row parsed again
        to tell (a finite DOUBLE or a BOOLEAN there means it was not a string). -#}
    (({{ typed }} rlike '^[-+0-9.eE]+\\z'
      and coalesce(abs({{ _json_field(json, name, 'DOUBLE') }}) < double('Infinity'), false))
     or ({{ typed }} in ('true', 'false')
         and {{ _json_field(json, name, 'BOOLEAN') }} is not null))
{%- endmacro %}


{% macro _json_number_pattern(name) -%}
    {#- Java regex (as a SQL string literal's content) capturing the JSON number written as the
        value of field `name` of a flat JSON object: it walks the object's pairs from the start,
        so text inside a string value never matches. A field name written with escapes is not
        found (model.decimal_value then finds no exact text either: docs/spec.md §3). -#}
    {%- set str = '"(?:[^"\\\\\\\\]++|\\\\\\\\.)*+"' -%}
    {{- '^\\\\s*\\\\{(?:\\\\s*' ~ str ~ '\\\\s*:\\\\s*(?:' ~ str ~ '|[^",{}\\\\[\\\\]]*+)\\\\s*,)*?\\\\s*"'
        ~ name ~ '"\\\\s*:\\\\s*(-?[0-9][-+.0-9eE]*+)\\\\s*[,}]' -}}
{%- endmacro %}


{% macro _decimal_fits(text, type) -%}
    {#- Whether decimal text fits decimal(p,s) exactly (model.decimal_fits, the same digit
        counting): at most s fractional digits once trailing zeros are dropped, at most p - s
        before the point; an exponent of at most 9 digits. Never rounds. -#}
    {%- set ps = type[8:-1].split(',') -%}
    {%- set precision = ps[0] | trim | int -%}
    {%- set scale = ps[1] | trim | int -%}
    {%- set digits = "trim(leading '0' from regexp_replace(regexp_extract(" ~ text ~ ", '^-?([0-9.]+)', 1), '[.]', ''))" -%}
    {%- set trimmed = "trim(trailing '0' from " ~ digits ~ ")" -%}
    {%- set exponent = "cast(coalesce(nullif(regexp_extract(" ~ text ~ ", '[eE]([-+]?[0-9]+)$', 1), ''), '0') as bigint)" -%}
    {%- set point = "(length(regexp_extract(" ~ text ~ ", '^-?[0-9]+[.]([0-9]+)', 1)) - " ~ exponent
        ~ " - (length(" ~ digits ~ ") - length(" ~ trimmed ~ ")))" -%}
    coalesce(
        {{ text }} rlike '^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]{1,9})?\\z'
        and (length({{ digits }}) = 0
             or (greatest(0, {{ point }}) <= {{ scale }}
                 and length({{ trimmed }}) - {{ point }} <= {{ precision - scale }})),
        false
    )
{%- endmacro %}
