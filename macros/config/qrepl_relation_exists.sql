{% macro qrepl_relation_exists(relation) %}
    {#- Whether `relation` (from qrepl_relation) exists, as dbt's relation cache knows it: the
        schema as listed when this invocation started, plus what its own models created. For a
        table a run reads only once an earlier run or the Python layer has made it. Not for a
        table another process may create or drop during the run: the run lock's checks list
        the schema again (show tables). -#}
    {{ return(adapter.get_relation(database=none, schema=relation.schema, identifier=relation.identifier) is not none) }}
{% endmacro %}
