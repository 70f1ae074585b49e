{% macro qrepl_prejudged_outcome(transaction_generation, subscription) %}
    {#- The outcome a transaction gets before any judging, or null when it is live: its lowest
        generation is below its subscription's, or the subscription awaits its snapshot. One
        rule for int_batch_transactions (the positions) and qrepl_batch_followers (which
        counts live transactions only). -#}
    case
        when {{ transaction_generation }} < {{ subscription }}.generation then 'rejected_reinit'
        when {{ subscription }}.status = 'reinit_pending' then 'rejected_reinit'
    end
{%- endmacro %}
