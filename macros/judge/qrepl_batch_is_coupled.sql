{% macro qrepl_batch_is_coupled() %}
    {#- Whether some publisher row of the batch has more than one candidate (live transaction
        touching it), so that one transaction's decision can depend on another's. Without
        such a row every candidate meets its row as the batch cut found it:
        the resolution is its pass 0 alone and int_queued_commands_judged needs no
        window over the rows (the uncoupled fast path). Outside a run (compile, docs, parse)
        and in a dbt unit test the answer is true: the general statements, exact for every
        batch. -#}
    {{ return(qrepl_batch_followers() | int != 0) }}
{% endmacro %}
