{% macro qrepl_batch_writes() %}
    {#- What batch_applied's pre-hooks have to write for the batch: `articles`, the articles
        with a row in publisher_changes, and `reinit`, whether reinit_requests has a row. One
        query, read once per run (qrepl_run_cache) by the first hook. -#}
    {{ return(qrepl_run_cache('batch_writes', _qrepl_batch_writes_read)) }}
{% endmacro %}


{% macro _qrepl_batch_writes_read() %}
    {#- qrepl_batch_writes' read of the batch's publisher_changes and reinit_requests. -#}
    {%- set batch_id = qrepl_batch_id() | int -%}
    {%- set found = run_query(
        "select 'publisher_changes' as mart, article from " ~ ref('publisher_changes')
        ~ " where batch_id = " ~ batch_id ~ " group by article"
        ~ " union all select 'reinit_requests' as mart, cast(null as string) as article from (select 1 from "
        ~ ref('reinit_requests') ~ " where batch_id = " ~ batch_id ~ " limit 1) as any_request"
    ) -%}
    {%- set writes = {'articles': [], 'reinit': false} -%}
    {%- for row in found.rows -%}
        {%- if row[0] == 'publisher_changes' -%}
            {%- do writes.articles.append(row[1]) -%}
        {%- else -%}
            {%- do writes.update({'reinit': true}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(writes) }}
{% endmacro %}
