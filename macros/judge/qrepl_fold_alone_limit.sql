{% macro qrepl_fold_alone_limit() %}
    {#- the resolution folds a coupled batch without set-based passes when at most
        this many of its candidates follow another on their row (qrepl_batch_followers):
        the fold of such a remainder costs less than the passes' windows. The dbt var
        `qrepl_fold_alone_up_to`, else the environment's QREPL_FOLD_ALONE_UP_TO, else 100000
        (make bench-profile, 2026-11-26: a 100k batch whose 99,999 candidates all follow one
        another resolved in 5.2 s folded alone against 6.1 s with the passes; the (1M, 1M)
        batch, far more followers, in 30.1 s against 16.0 s). 0 always runs the passes. -#}
    {{ return(var('qrepl_fold_alone_up_to', env_var('QREPL_FOLD_ALONE_UP_TO', '100000')) | int) }}
{% endmacro %}
