{% macro _qrepl_conflict_id(value, argument='conflict_id') %}
    {#- `value` when it is a conflict id as `qrepl conflicts` shows it (32 lowercase hex digits),
        else a compile error naming `argument`: the id is then safe to place in SQL text. -#}
    {%- if not modules.re.fullmatch('[0-9a-f]{32}', value | string) -%}
        {{ exceptions.raise_compiler_error("qrepl: " ~ argument ~ " must be the 32 hex digits `qrepl conflicts` shows, got '" ~ (value | string)[:40] ~ "'") }}
    {%- endif -%}
    {{ return(value | string) }}
{% endmacro %}
