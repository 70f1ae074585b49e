{% macro purge_expired_conflicts() %}
    {#- conflict_retention_days > 0: conflicts older than that are deleted; 0 keeps them;
        not centralized, a subscribed subscriber's undelivered ones are kept. Asked
        first (a read that Iceberg answers from the files' column bounds): a DELETE that
        matches nothing still commits a snapshot, and most runs have nothing to purge. -#}
    {%- if qrepl_is_running() -%}
        {%- set expired = qrepl_conflicts_to_purge(this) -%}
        {%- if expired -%}
            {%- call statement('purge_expired_conflicts', fetch_result=false) -%}
                delete from {{ this }} where {{ expired }}
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{% macro qrepl_conflicts_to_purge(conflicts) %}
    {#- The condition on the table `conflicts` that selects the conflicts past the publication's
        retention as of this run's batch time, if at least one conflict meets it (one read that
        Iceberg answers from the files' column bounds); '' when none does or the publication
        keeps them (conflict_retention_days 0). purge_expired_conflicts deletes by it, and
        qrepl_run_is_idle asks it. -#}
    {%- set publication = qrepl_config() -%}
    {%- if publication.conflict_retention_days <= 0 -%}
        {{ return('') }}
    {%- endif -%}
    {%- set expired -%}
        detected_at < {{ qrepl_batch_time() }} - make_interval(0, 0, 0, {{ publication.conflict_retention_days }})
        {%- if not publication.centralized_conflicts %}
        and {{ _qrepl_conflicts_delivered_or_unsubscribed(conflicts) }}
        {%- endif %}
    {%- endset -%}
    {%- if run_query('select 1 from ' ~ conflicts ~ ' where ' ~ expired ~ ' limit 1').rows | length == 0 -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(expired) }}
{% endmacro %}


{% macro _qrepl_conflicts_delivered_or_unsubscribed(conflicts) %}
    {#- Conflicts not centralized are delivered to their subscriber (qrepl distribute marks the
        newest batch it delivered in conflict_deliveries): the purge keeps a subscribed
        subscriber's conflicts above its mark, however old (a subscriber offline for longer
        than the retention still receives them); a dropped subscriber's are purged. -#}
    {%- set marks = qrepl_relation('conflict_deliveries') -%}
    {%- set has_marks = qrepl_relation_exists(marks) -%}
    conflict_id not in (
        select undelivered.conflict_id
        from {{ conflicts }} as undelivered
        inner join {{ qrepl_relation('subscriptions') }} as subscribed
            on undelivered.subscriber = subscribed.subscriber
        {%- if has_marks %}
        left join (select subscriber, max(batch_id) as batch_id from {{ marks }} group by subscriber) as delivered
            on undelivered.subscriber = delivered.subscriber
        where undelivered.batch_id > coalesce(delivered.batch_id, 0)
        {%- endif %}
    )
{%- endmacro %}
