{% macro judge_command(op, state_exists, state_version, old_version) %}
    {#- The judging table of docs/spec.md §5 as a SQL expression: null when the command is ok,
        else its conflict type. `state_*` describe the row the command is judged against.
        Decides docs/spec.md 5.2 (Judging a command). -#}
    case
        when {{ op }} = 'U' and not {{ state_exists }} then 'update_missing'
        when {{ op }} = 'U' and not ({{ state_version }} <=> {{ old_version }}) then 'update_update'
        when {{ op }} = 'D' and not {{ state_exists }} then 'delete_missing'
        when {{ op }} = 'D' and not ({{ state_version }} <=> {{ old_version }}) then 'delete_update'
        when {{ op }} = 'I' and {{ state_exists }} then 'insert_exists'
    end
{%- endmacro %}
