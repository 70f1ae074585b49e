{% macro qrepl_relation(identifier) %}
    {#- The schema comes from the profile (QREPL_SCHEMA / --schema): validated like every name read at run time. -#}
    {{- return(api.Relation.create(schema=_qrepl_identifier(target.schema, 'schema'), identifier=_qrepl_identifier(identifier, 'table'))) -}}
{% endmacro %}
