{% macro qrepl_batch_followers() %}
    {#- How many candidates of the batch follow another on their publisher row (a row with n
        live transactions counts n - 1): 0 for an uncoupled batch. Read from the frozen batch
        (int_batch_commands with the prejudged outcomes of int_batch_transactions, from int_batch_subscriptions) by the first node
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
        publisher row) pair, so each row counts its distinct live transactions. A transaction
        is live unless prejudged as int_batch_transactions prejudges it (a generation older
        than its subscription's at the cut, or a subscription awaiting its snapshot), read
        here from the two frozen tables that model derives it from. -#}
    {%- set batch_id = qrepl_batch_id() | int -%}
    {%- set counted = run_query(
        'with commands as (select * from ' ~ qrepl_relation('int_batch_commands')
        ~ ' where batch_id = ' ~ batch_id ~ ' and reject_reason is null),'
        ~ ' live as (select commands.subscriber, commands.tran_id from commands'
        ~ ' inner join ' ~ qrepl_relation('int_batch_subscriptions') ~ ' as subscriptions'
        ~ ' on commands.subscriber = subscriptions.subscriber and subscriptions.batch_id = ' ~ batch_id
        ~ ' group by commands.subscriber, commands.tran_id, subscriptions.generation, subscriptions.status'
        ~ ' having not coalesce(min(commands.generation) < subscriptions.generation, false)'
        ~ " and not coalesce(subscriptions.status = 'reinit_pending', false))"
        ~ ' select coalesce(sum(candidates - 1), 0) from ('
        ~ 'select count(distinct commands.subscriber, commands.tran_id) as candidates from commands'
        ~ ' inner join live on commands.tran_id = live.tran_id and commands.subscriber = live.subscriber'
        ~ ' group by commands.article, commands.row_key having count(distinct commands.subscriber, commands.tran_id) > 1)'
    ) -%}
    {{ return(counted.rows[0][0] | int) }}
{% endmacro %}
