{% macro qrepl_fold_alone_limit() %}
    {#- the resolution folds a coupled batch without set-based passes when at most
        this many of its candidates follow another on their row (qrepl_batch_followers):
        the fold of such a remainder costs less than the passes' windows. The dbt var
        `qrepl_fold_alone_up_to`, else the environment's QREPL_FOLD_ALONE_UP_TO, else 100000
        (how the default was measured: docs/performance.md, "Thresholds and choices measured").
        0 always runs the passes. -#}
    {{ return(var('qrepl_fold_alone_up_to', env_var('QREPL_FOLD_ALONE_UP_TO', '100000')) | int) }}
{% endmacro %}
