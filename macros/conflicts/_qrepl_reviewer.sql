{% macro _qrepl_reviewer(value, argument) %}
    {#- Who reviews a conflict: `value`, or $USER when it is empty; a compile error naming
        `argument` unless it is a user name (letters, digits, _ . @ -, at most 64), so it is
        safe to place in SQL text. -#}
    {%- set who = value or env_var('USER', 'unknown') -%}
    {%- if not modules.re.fullmatch('[A-Za-z0-9_.@-]{1,64}', who | string) -%}
        {{ exceptions.raise_compiler_error("qrepl: " ~ argument ~ " must be a user name (letters, digits, _ . @ -), got '" ~ (who | string)[:40] ~ "'") }}
    {%- endif -%}
    {{ return(who | string) }}
{% endmacro %}
