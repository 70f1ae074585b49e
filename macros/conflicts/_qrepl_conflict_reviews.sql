{% macro _qrepl_conflict_reviews() %}
    {#- conflict_reviews, created if missing: one row per conflict resolved by hand
        (qrepl_resolve_conflict) and one per conflict removed from the lists
        (qrepl_remove_conflicts); only those two macros write it. -#}
    {%- set reviews = qrepl_relation('conflict_reviews') -%}
    {%- call statement('qrepl_reviews_table', fetch_result=false) -%}
        create table if not exists {{ reviews }} (
            conflict_id string, keep string, outcome string, resolved_by string, resolved_at timestamp,
            written_version string
        ) using iceberg tblproperties ('format-version' = '2')
    {%- endcall -%}
    {{ return(reviews) }}
{% endmacro %}
