{% macro _typed_value(read, type) -%}
    {#- The column's typed value from what _read_type read (NULL when it does not fit). -#}
    {%- if type == 'date' -%}
        case when {{ read }} rlike '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}\\z' then cast({{ read }} as date) end
    {%- elif type in ('tinyint', 'smallint') -%}
        case when {{ read }} between {{ _int_range(type) }} then cast({{ read }} as {{ type }}) end
    {%- elif type == 'timestamp_ntz' -%}
        case when {{ read }} rlike '{{ _timestamp_pattern(type) }}' then {{ _timestamp_of(read, type) }} end
    {%- elif type == 'timestamp' -%}
        {#- the instant in years 0001..9999 in UTC (0001-01-01T00:30+01:00 is in year 0) -#}
        case when {{ read }} rlike '{{ _timestamp_pattern(type) }}'
            and unix_micros({{ _timestamp_of(read, type) }}) between -62135596800000000 and 253402300799999999
            then {{ _timestamp_of(read, type) }} end
    {%- elif type == 'binary' -%}
        case when {{ read }} rlike '{{ _base64_pattern() }}' then unbase64({{ read }}) end
    {%- else -%}
        {{ read }}
    {%- endif -%}
{%- endmacro %}


{% macro _read_type(type) -%}
    {#- The type a queued value of an article column is read as by from_json: a date as its text
        (cast afterwards: from_json throws on an impossible date), a timestamp or binary as its
        text (checked and converted afterwards: from_json's own parse of a timestamp truncates
        a 7th fractional digit and takes text without zone; of base64, Jackson's), a tinyint or smallint as INT
        (range checked afterwards, whatever Jackson does with 200 as a byte). -#}
    {%- if type in ('date', 'timestamp', 'timestamp_ntz', 'binary') -%}STRING
    {%- elif type in ('tinyint', 'smallint') -%}INT
    {%- else -%}{{ type | upper }}
    {%- endif -%}
{%- endmacro %}


{% macro _int_range(type) -%}
    {{- '-128 and 127' if type == 'tinyint' else '-32768 and 32767' -}}
{%- endmacro %}


{% macro _timestamp_pattern(type) -%}
    {#- Java regex (a SQL string literal's content) of a queued timestamp's text:
        model.TIMESTAMP_TEXT, or model.TIMESTAMP_NTZ_TEXT for a timestamp_ntz. -#}
    {{- '^(?!0000)[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,6})?' -}}
    {{- '' if type == 'timestamp_ntz' else '(Z|[-+]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))' -}}
    {{- '\\\\z' -}}
{%- endmacro %}


{% macro _timestamp_of(text, type) -%}
    {#- The timestamp of text that matches _timestamp_pattern, built from its fields (never
        through a lenient parse: cast truncates a 7th fractional digit, measured): NULL for a
        day that does not exist (2026-02-30). The seconds and their fraction are read as an
        exact decimal; an offset is passed to make_timestamp as the zone. -#}
    {%- set fields -%}
        int(substr({{ text }}, 1, 4)), int(substr({{ text }}, 6, 2)), int(substr({{ text }}, 9, 2)),
        int(substr({{ text }}, 12, 2)), int(substr({{ text }}, 15, 2)),
        cast(regexp_extract({{ text }}, '^.{17}([0-9]{2}([.][0-9]{1,6})?)', 1) as decimal(8, 6))
    {%- endset -%}
    {%- if type == 'timestamp_ntz' -%}
        make_timestamp_ntz({{ fields }})
    {%- else -%}
        make_timestamp({{ fields }}, regexp_extract({{ text }}, '(Z|[-+][0-9]{2}:[0-9]{2})\\z', 1))
    {%- endif -%}
{%- endmacro %}


{% macro _base64_pattern() -%}
    {#- Java regex (a SQL string literal's content) of canonical padded base64: model.BASE64_TEXT. -#}
    {{- '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?\\\\z' -}}
{%- endmacro %}
