{% macro qrepl_read_once() %}
    {#- A column for a step (CTE) that later steps read more than once. Spark inlines a
        deterministic CTE at each read and computes it again there, each copy with its
        reader's filters pushed in, so the copies share nothing. A CTE with a
        non-deterministic column is not inlined: it is computed once, shuffled, and every
        read reuses that shuffle. The column's value is never read. -#}
    rand() as read_once
{%- endmacro %}
