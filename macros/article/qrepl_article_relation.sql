{% macro qrepl_article_relation(article) %}
    {#- The article's publisher table: `<publication schema>.<article name>`, or the table its
        `table:` names (`schema.table`, or a bare `table` in the publication's schema). Each part
        validated again as it is read back (the config tables can be written by anyone). -#}
    {%- set table = article.get('table') -%}
    {%- if not table -%}
        {{- return(qrepl_relation(article.name)) -}}
    {%- endif -%}
    {%- set parts = (table | string).split('.') -%}
    {%- if parts | length == 1 -%}
        {{- return(qrepl_relation(parts[0])) -}}
    {%- elif parts | length == 2 -%}
        {{- return(api.Relation.create(schema=_qrepl_identifier(parts[0], 'schema'),
                                       identifier=_qrepl_identifier(parts[1], 'table'))) -}}
    {%- endif -%}
    {%- set msg -%}
qrepl: invalid table '{{ table }}' of article {{ article.name }}: must be SCHEMA.TABLE or TABLE
    {%- endset -%}
    {{ exceptions.raise_compiler_error(msg) }}
{% endmacro %}
