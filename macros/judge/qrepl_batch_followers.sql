{% macro qrepl_batch_followers() %}
    {#- How many candidates of the batch follow another on their publisher row (a row with n
        live transactions counts n - 1): 0 for an uncoupled batch. Read from the frozen batch
        (int_batch_commands with int_batch_transactions' prejudged outcomes) by the first node
        that asks (the resolution) and kept for the run (qrepl_run_cache: the judging asks
        too), one grouping of the batch's commands. -1 (not known) outside a run (compile,
        docs, parse) and in a dbt unit test, whose fixtures are not tables. -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' -%}
        {{ return(-1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_followers', _qrepl_batch_followers_read)) }}
{% endmacro %}


{% macro _qrepl_batch_followers_read() %}
    {#- qrepl_batch_followers' read of the frozen batch: a candidate is a (live transaction,
        publisher row) pair, so each row counts its distinct live transactions. Both tables are
        upstream of every asker (the candidates are derived from them). -#}
    {%- set batch_id = qrepl_batch_id() | int -%}
    {%- set counted = run_query(
        'select coalesce(sum(candidates - 1), 0) from ('
        ~ 'select count(distinct commands.subscriber, commands.tran_id) as candidates from '
        ~ qrepl_relation('int_batch_commands') ~ ' as commands inner join ' ~ qrepl_relation('int_batch_transactions')
        ~ ' as transactions on commands.tran_id = transactions.tran_id'
        ~ ' and commands.subscriber = transactions.subscriber'
        ~ ' where commands.batch_id = ' ~ batch_id ~ ' and commands.reject_reason is null'
        ~ ' and transactions.batch_id = ' ~ batch_id ~ ' and transactions.prejudged_outcome is null'
        ~ ' group by commands.article, commands.row_key having count(distinct commands.subscriber, commands.tran_id) > 1)'
    ) -%}
    {{ return(counted.rows[0][0] | int) }}
{% endmacro %}
