{% macro qrepl_after_settled(settled) %}
    {#- Whether every earlier candidate on the row (window `earlier_on_row`) is `settled`:
        true for the first candidate on a row. -#}
    coalesce(bool_and({{ settled }}) over earlier_on_row, true)
{%- endmacro %}
