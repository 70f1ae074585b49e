{% macro _qrepl_identifier(name, what) %}
    {#- fullmatch, not match with ^...$: `$` also matches before a final newline ('north\n') -#}
    {%- if name is none or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name | string) -%}
        {%- set msg -%}
qrepl: invalid {{ what }} name '{{ (name | string).replace('\\', '\\\\').replace('\n', '\\n').replace('\r', '\\r') }}': identifiers must match ^[A-Za-z_][A-Za-z0-9_]*$
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(name | string) }}
{% endmacro %}
