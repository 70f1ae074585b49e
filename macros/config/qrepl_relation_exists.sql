{% macro qrepl_relation_exists(relation) %}
    {#- Whether `relation` (from qrepl_relation) exists in the catalog now: for a table a run
        reads only once an earlier run or the Python layer has made it. -#}
    {{ return(adapter.get_relation(database=none, schema=relation.schema, identifier=relation.identifier) is not none) }}
{% endmacro %}
