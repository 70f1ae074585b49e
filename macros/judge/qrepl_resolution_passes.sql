{% macro qrepl_resolution_passes() %}
    {#- How many set-based passes int_resolution_passes runs after pass 0: none for a batch
        without a shared row (the uncoupled fast path) or under subscriber_wins, none for a
        coupled batch with at most qrepl_fold_alone_limit() candidates that follow another on
        their row (the fold of that remainder costs less than two more passes), else 2. Each
        pass reaches one link further along chains of dependent transactions; what is left is
        folded. -#}
    {%- set coupled = qrepl_config().policy != 'subscriber_wins' and qrepl_batch_is_coupled() -%}
    {%- set followers = qrepl_batch_followers() | int -%}
    {{ return(2 if coupled and (followers < 0 or followers > qrepl_fold_alone_limit()) else 0) }}
{% endmacro %}
