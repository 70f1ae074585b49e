{% macro _qrepl_run_lock_holder() %}
    {#- The current lock's properties (holder, invocation_id, acquired_at), or none. Asks the
        metastore, not dbt's relation cache, which may predate a concurrent run's lock. -#}
    {%- set schema = _qrepl_identifier(target.schema, 'schema') -%}
    {%- set tables = run_query("show tables in " ~ schema ~ " like 'qrepl_run_lock'") -%}
    {%- if tables.rows | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set props = {'holder': 'unknown holder', 'invocation_id': '', 'acquired_at': 'unknown time'} -%}
    {%- for row in run_query('show tblproperties ' ~ schema ~ '.qrepl_run_lock').rows -%}
        {%- if row[0].startswith('qrepl.') -%}
            {%- do props.update({row[0][6:]: row[1]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(props) }}
{% endmacro %}
