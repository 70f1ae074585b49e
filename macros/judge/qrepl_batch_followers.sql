{% macro qrepl_batch_followers() %}
    {#- How many candidates of the batch follow another on their publisher row (a row with n
        live transactions counts n - 1): 0 for an uncoupled batch. Read from
        int_transaction_rows by the first node that asks (the resolution) and kept for the run
        (qrepl_run_cache: the judging asks too), one grouping of the candidates. -1 (not
        known) outside a run (compile, docs, parse) and in a dbt unit test, whose fixtures are
        not tables. -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' -%}
        {{ return(-1) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('batch_followers', _qrepl_batch_followers_read)) }}
{% endmacro %}


{% macro _qrepl_batch_followers_read() %}
    {#- qrepl_batch_followers' read of int_transaction_rows. -#}
    {%- set counted = run_query(
        'select coalesce(sum(candidates - 1), 0) from (select count(*) as candidates from '
        ~ ref('int_transaction_rows') ~ ' where batch_id = ' ~ (qrepl_batch_id() | int)
        ~ ' and prejudged_outcome is null group by article, row_key having count(*) > 1)'
    ) -%}
    {{ return(counted.rows[0][0] | int) }}
{% endmacro %}
