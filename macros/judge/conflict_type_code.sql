{% macro conflict_type_code(conflict_type) %}
    {#- SQL Server's conflict_type codes of the transactional conflict tables.
        Decides docs/spec.md 5.3 (Conflict codes). -#}
    case {{ conflict_type }}
        when 'update_update' then 1
        when 'update_missing' then 2
        when 'delete_update' then 3
        when 'delete_missing' then 4
        when 'insert_exists' then 5
    end
{%- endmacro %}
