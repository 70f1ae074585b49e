{% macro qrepl_met_state(applied) %}
    {#- The resolution's state a candidate meets when the earlier candidates on its row were
        decided by `applied`: the state the last applied one produced, else the publisher's
        at the batch cut. Over the window `earlier_on_row` (the row's earlier candidates). -#}
    coalesce(
        last(case when {{ applied }} then named_struct('state', produced_state) end, true) over earlier_on_row,
        named_struct('state', root_state)
    ).state
{%- endmacro %}
