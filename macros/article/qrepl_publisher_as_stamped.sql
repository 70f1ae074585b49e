{% macro qrepl_publisher_as_stamped(article) %}
    {#- The article's publisher table as of the snapshot this run's publisher trigger examined
        (qrepl_stamp_publisher keeps it for the run), for the batch cut. A write that commits
        after the trigger looked (a job's UPDATE that keeps the version, during the run) is
        then not in the state the batch is resolved against: the compare-and-swap MERGE
        (macro apply_publisher_changes) compares each row's whole image with that state and
        leaves such a row as the writer left it, so no write is overwritten unseen
        (docs/spec.md §10). Snapshot 0 stands for "before the table's first snapshot": an empty
        table. Outside a run, or when the trigger recorded nothing for the article, the table
        as it is now. -#}
    {%- set table = qrepl_article_relation(article) -%}
    {%- set examined = qrepl_run_state('stamp_examined', {}).get(article['name']) if qrepl_is_running() else none -%}
    {%- if examined is none -%}
        {{ return(table) }}
    {%- elif (examined.snapshot | int) == 0 -%}
        {{ return('(select * from ' ~ table ~ ' where false)') }}
    {%- endif -%}
    {{ return(table ~ ' version as of ' ~ (examined.snapshot | int)) }}
{% endmacro %}
