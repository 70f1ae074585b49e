{% macro apply_publisher_changes() %}
    {#- Merge the current batch of publisher_changes into each article's Iceberg table.
        MERGE sets exact values and deletes, so running it again after a crash is harmless. -#}
    {%- if qrepl_is_running() -%}
        {%- set publication = qrepl_config() -%}
        {%- set batch_id = qrepl_batch_id() -%}
        {%- for article in publication.articles -%}
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
                        changes.change_op,
                        parsed.*
                    from {{ this }} as changes
                    lateral view inline(array(from_json(
                        changes.row, '{{ article_schema_ddl(article) }}, msrepl_tran_version STRING'
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'upsert'
                    union all
                    select
                        changes.change_op,
                        parsed.*
                    from {{ this }} as changes
                    lateral view inline(array(named_struct(
                        {%- for name, type in article.columns %}
                        '{{ name }}', {% if name in article.key %}from_json(changes.row_key, '{{ article_schema_ddl(article, keys_only=true) }}').{{ name }}{% else %}cast(null as {{ type }}){% endif %},
                        {%- endfor %}
                        'msrepl_tran_version', cast(null as string)
                    ))) parsed
                    where changes.batch_id = {{ batch_id }} and changes.article = '{{ article.name }}'
                        and changes.change_op = 'delete'
                ) as source
                on {{ conditions | join(' and ') }}
                when matched and source.change_op = 'delete' then delete
                when matched then update set
                    {%- for c in columns %}
                    target.{{ c }} = source.{{ c }}{{ ',' if not loop.last }}
                    {%- endfor %}
                when not matched and source.change_op = 'upsert' then insert ({{ columns | join(', ') }})
                    values ({% for c in columns %}source.{{ c }}{{ ', ' if not loop.last }}{% endfor %})
            {%- endcall -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}


{% macro apply_reinit_requests() %}
    {#- Mark the subscriptions of this batch's reinit requests as reinit_pending. -#}
    {%- if qrepl_is_running() -%}
        {%- set batch_id = qrepl_batch_id() -%}
        {%- call statement('apply_reinit_requests', fetch_result=false) -%}
            merge into {{ qrepl_relation('subscriptions') }} as target
            using (select * from {{ this }} where batch_id = {{ batch_id }}) as source
            on target.subscriber = source.subscriber
            when matched then update set
                target.status = 'reinit_pending',
                target.reinit_requested_at = source.reinit_requested_at,
                target.reinit_reason = source.reinit_reason
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{% macro purge_expired_conflicts() %}
    {#- conflict_retention_days > 0: conflicts older than that are deleted; 0 keeps them. -#}
    {%- if qrepl_is_running() -%}
        {%- set publication = qrepl_config() -%}
        {%- if publication.conflict_retention_days > 0 -%}
            {%- call statement('purge_expired_conflicts', fetch_result=false) -%}
                delete from {{ this }}
                where detected_at < {{ qrepl_batch_time() }} - make_interval(0, 0, 0, {{ publication.conflict_retention_days }})
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
