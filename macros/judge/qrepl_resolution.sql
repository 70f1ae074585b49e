{% macro qrepl_resolution() %}
    {#- How this run's batch is resolved (docs/architecture.md §5), decided here alone from the
        publication's policy and qrepl_batch_followers; int_resolution_passes,
        int_transactions_resolved and the run's recorded decisions (qrepl_run_decisions) all
        read this answer. A dict:
          steps    'every live transaction applied' under subscriber_wins; else 'pass 0' for
                   a batch without a shared row (the uncoupled fast path), 'pass 0 then fold'
                   for a coupled batch with at most qrepl_fold_alone_limit() followers (the
                   fold of that remainder costs less than two more passes), else
                   'passes 0-2 then fold'
          coupled  whether the passes need windows over the rows and the fold is read
          passes   how many set-based passes int_resolution_passes runs after pass 0
        Outside a run and in a dbt unit test the followers are not known (-1): passes 0-2 then
        the fold, the general statements, exact for every batch. -#}
    {%- set followers = qrepl_batch_followers() | int -%}
    {%- if qrepl_config().policy == 'subscriber_wins' -%}
        {{ return({'steps': 'every live transaction applied', 'coupled': false, 'passes': 0}) }}
    {%- elif not qrepl_batch_is_coupled() -%}
        {{ return({'steps': 'pass 0', 'coupled': false, 'passes': 0}) }}
    {%- elif followers > 0 and followers <= qrepl_fold_alone_limit() -%}
        {{ return({'steps': 'pass 0 then fold', 'coupled': true, 'passes': 0}) }}
    {%- endif -%}
    {{ return({'steps': 'passes 0-2 then fold', 'coupled': true, 'passes': 2}) }}
{% endmacro %}
