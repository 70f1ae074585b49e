{% macro qrepl_state_matches(state) %}
    {#- The resolution's test of a candidate against a row state (a version, '' for a row
        without one, null for no row): an insert expects no row, anything else its version. -#}
    case
        when expects_absent then {{ state }} is null
        else coalesce({{ state }} = expected_version, false)
    end
{%- endmacro %}
