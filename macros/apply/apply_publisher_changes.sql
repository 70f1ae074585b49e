{% macro apply_publisher_changes(batch_id) %}
    {#- Merge a batch of publisher_changes into each article's Iceberg table by compare-and-swap:
        a row is changed only while it still holds the state the batch was resolved against
        (that version, or absence for a row the batch inserts). A publisher-local write that
        landed after the batch read the publisher is never overwritten: it counts as made
        after the batch, and `batch_applied` reports the row as kept. Running it again after a
        crash changes nothing that is already applied (the row then holds the batch's own
        version, which is not the expected one). An article the batch does not change gets no
        MERGE (macro qrepl_batch_writes): an empty MERGE still commits a snapshot, and it
        would contend with publisher-local writers to that table for nothing. -#}
    {%- if qrepl_is_running() -%}
        {%- set publication = qrepl_config() -%}
        {%- set changes = ref('publisher_changes') -%}
        {%- set changed = qrepl_batch_writes().articles -%}
        {%- for article in publication.articles if article.name in changed -%}
            {%- set conditions = [] -%}
            {%- for k in article.key -%}
                {%- do conditions.append('target.' ~ k ~ ' = source.' ~ k) -%}
            {%- endfor -%}
            {%- set columns = [] -%}
            {%- for name, type in article.columns -%}
                {%- do columns.append(name) -%}
            {%- endfor -%}
            {%- do columns.append('msrepl_tran_version') -%}
            {%- call statement('apply_' ~ article.name, fetch_result=false) -%}
                merge into {{ qrepl_relation(article.name) }} as target
                using (
                    select
                        changes.change_op as qrepl_change_op,
                        changes.expected_exists as qrepl_expected_exists,
                        changes.expected_version as qrepl_expected_version,
                        parsed.*
                    from {{ changes }} as changes
                    lateral view inline(array(from_json(
                        changes.row, '{{ article_schema_ddl(article) }}, msrepl_tran_version STRING'
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'upsert'
                    union all
                    select
                        changes.change_op as qrepl_change_op,
                        changes.expected_exists as qrepl_expected_exists,
                        changes.expected_version as qrepl_expected_version,
                        parsed.*
                    from {{ changes }} as changes
                    lateral view inline(array(named_struct(
                        {%- for name, type in article.columns %}
                        '{{ name }}', {% if name in article.key %}{{ typed_key_expr(article, 'changes.row_key') }}.{{ name }}{% else %}cast(null as {{ type }}){% endif %},
                        {%- endfor %}
                        'msrepl_tran_version', cast(null as string)
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'delete'
                ) as source
                on {{ conditions | join(' and ') }}
                when matched and source.qrepl_expected_exists
                    and target.msrepl_tran_version <=> source.qrepl_expected_version
                    and source.qrepl_change_op = 'delete' then delete
                when matched and source.qrepl_expected_exists
                    and target.msrepl_tran_version <=> source.qrepl_expected_version then update set
                    {%- for c in columns %}
                    target.{{ c }} = source.{{ c }}{{ ',' if not loop.last }}
                    {%- endfor %}
                when not matched and not source.qrepl_expected_exists and source.qrepl_change_op = 'upsert'
                    then insert ({{ columns | join(', ') }})
                    values ({% for c in columns %}source.{{ c }}{{ ', ' if not loop.last }}{% endfor %})
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{% macro apply_reinit_requests(batch_id) %}
    {#- Mark the subscriptions of a batch's reinit requests reinit_pending, only while each
        still has the generation the batch was cut with: a reinitialization completed after
        the batch (generation + 1) is never undone by finishing the batch late. Only when the
        batch has a reinit request (macro qrepl_batch_writes): an empty MERGE would commit a
        snapshot of the subscriptions every run, contending with the Python layer's writes. -#}
    {%- if qrepl_is_running() and qrepl_batch_writes().reinit -%}
        {%- call statement('apply_reinit_requests', fetch_result=false) -%}
            merge into {{ qrepl_relation('subscriptions') }} as target
            using (select * from {{ ref('reinit_requests') }} where batch_id = {{ batch_id }}) as source
            on target.subscriber = source.subscriber and target.generation = source.subscription_generation
            when matched and target.status = 'active' then update set
                target.status = 'reinit_pending',
                target.reinit_requested_at = source.reinit_requested_at,
                target.reinit_reason = source.reinit_reason
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


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


{% macro _qrepl_conflicts_delivered_or_unsubscribed() %}
    {#- Conflicts not centralized are delivered to their subscriber (qrepl distribute marks the
        newest batch it delivered in conflict_deliveries): the purge keeps a subscribed
        subscriber's conflicts above its mark, however old (a subscriber offline for longer
        than the retention still receives them); a dropped subscriber's are purged. -#}
    {%- set marks = qrepl_relation('conflict_deliveries') -%}
    {%- set has_marks = adapter.get_relation(database=none, schema=marks.schema, identifier=marks.identifier) is not none -%}
    conflict_id not in (
        select undelivered.conflict_id
        from {{ this }} as undelivered
        inner join {{ qrepl_relation('subscriptions') }} as subscribed
            on undelivered.subscriber = subscribed.subscriber
        {%- if has_marks %}
        left join (select subscriber, max(batch_id) as batch_id from {{ marks }} group by subscriber) as delivered
            on undelivered.subscriber = delivered.subscriber
        where undelivered.batch_id > coalesce(delivered.batch_id, 0)
        {%- endif %}
    )
{%- endmacro %}


{% macro purge_expired_conflicts() %}
    {#- conflict_retention_days > 0: conflicts older than that are deleted; 0 keeps them;
        not centralized, a subscribed subscriber's undelivered ones are kept. Asked
        first (a read that Iceberg answers from the files' column bounds): a DELETE that
        matches nothing still commits a snapshot, and most runs have nothing to purge. -#}
    {%- if qrepl_is_running() -%}
        {%- set publication = qrepl_config() -%}
        {%- if publication.conflict_retention_days > 0 -%}
            {%- set expired -%}
                detected_at < {{ qrepl_batch_time() }} - make_interval(0, 0, 0, {{ publication.conflict_retention_days }})
                {%- if not publication.centralized_conflicts %}
                and {{ _qrepl_conflicts_delivered_or_unsubscribed() }}
                {%- endif %}
            {%- endset -%}
            {%- if run_query('select 1 from ' ~ this ~ ' where ' ~ expired ~ ' limit 1').rows | length > 0 -%}
                {%- call statement('purge_expired_conflicts', fetch_result=false) -%}
                    delete from {{ this }} where {{ expired }}
                {%- endcall -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
