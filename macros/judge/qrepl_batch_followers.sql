{% macro qrepl_batch_followers() %}
    {#- How many candidates of the batch follow another on their publisher row (a row with n
        live transactions counts n - 1): 0 for an uncoupled batch. Read from the frozen batch
        (int_batch_commands and int_batch_subscriptions) by the first node that asks (the
        judging) and kept for the run (qrepl_run_cache), one grouping of the batch's commands.
        -1 (not known) outside a run (compile, docs, parse) and in a dbt unit test, whose
        fixtures are not tables. -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' -%}
        {{ return(-1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_followers', _qrepl_batch_followers_read)) }}
{% endmacro %}


{% macro _qrepl_batch_followers_read() %}
    {#- qrepl_batch_followers' read of the frozen batch: a candidate is a (live transaction,
        publisher row) pair, so each row counts its distinct live transactions. A transaction is
        live unless qrepl_prejudged_outcome prejudges it (on the transaction's lowest
        generation), as in int_batch_transactions. Both tables are upstream of every asker. -#}
    {%- set batch_id = qrepl_batch_id() | int -%}
    {%- set commands = qrepl_relation('int_batch_commands') -%}
    {%- set subscriptions = qrepl_relation('int_batch_subscriptions') -%}
    {%- set counted = run_query(
        'select coalesce(sum(candidates - 1), 0) from ('
        ~ 'select count(distinct commands.subscriber, commands.tran_id) as candidates from ('
        ~ 'select *, min(generation) over (partition by subscriber, tran_id) as transaction_generation'
        ~ ' from ' ~ commands ~ ' where batch_id = ' ~ batch_id ~ ' and reject_reason is null'
        ~ ') as commands inner join ' ~ subscriptions ~ ' as subscriptions'
        ~ ' on commands.subscriber = subscriptions.subscriber and subscriptions.batch_id = ' ~ batch_id
        ~ ' where (' ~ qrepl_prejudged_outcome('commands.transaction_generation', 'subscriptions') ~ ') is null'
        ~ ' group by commands.article, commands.row_key having count(distinct commands.subscriber, commands.tran_id) > 1)'
    ) -%}
    {{ return(counted.rows[0][0] | int) }}
{% endmacro %}
