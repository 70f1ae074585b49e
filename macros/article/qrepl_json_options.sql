{% macro qrepl_json_options(keep_nulls=false) -%}
    {#- Options of every to_json over article values (row images, canonical keys): timestamps
        with six fractional digits, a `timestamp` as the instant in UTC with `Z` (the session
        zone is UTC), a `timestamp_ntz` without zone: model.timestamp_text. to_json's default
        writes milliseconds only (docs/stack.md 35). keep_nulls: write null fields too. -#}
    map('timestampFormat', "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX", 'timestampNTZFormat', "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"
        {%- if keep_nulls %}, 'ignoreNullFields', 'false'{% endif %})
{%- endmacro %}
