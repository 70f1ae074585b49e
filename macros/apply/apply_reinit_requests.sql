{% macro apply_reinit_requests(batch_id) %}
    {#- Mark the subscriptions of a batch's reinit requests reinit_pending, only while each
        still has the generation the batch was cut with: a reinitialization completed after
        the batch (generation + 1) is never undone by finishing the batch late. Only when the
        batch has a reinit request (macro qrepl_batch_writes): an empty MERGE would commit a
        snapshot of the subscriptions every run, contending with the Python layer's writes.
        Decides docs/spec.md 5.6 (publisher_wins_reinit). -#}
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
